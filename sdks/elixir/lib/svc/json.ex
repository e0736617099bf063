defmodule Svc.JSON do
  @moduledoc """
  A small, strict JSON (RFC 8259) codec, because OTP 25 has no `:json` module and the SDK
  downloads nothing from Hex.

  Decoding:

    * objects become maps with string keys (a repeated member keeps its last value, as most
      parsers do), arrays lists, `true`/`false`/`null` `true`/`false`/`nil`;
    * numbers without a fraction or exponent become integers (any size), the others floats;
    * strings must be valid UTF-8; `\\uXXXX` escapes are decoded, surrogate pairs joined, and a
      lone surrogate is an error (never silently replaced);
    * nesting deeper than `:max_depth` (default 64) is refused, so hostile input cannot exhaust
      the stack; only whitespace may follow the value.

  Encoding takes maps (atom or string keys), lists, strings, numbers, booleans, `nil` and atoms
  (as strings). Output is UTF-8; control characters, `"` and `\\` are escaped, and so are U+2028
  and U+2029 so the output is also safe inside JavaScript.
  """

  @default_max_depth 64

  @doc """
  Decodes `text`. Returns `{:ok, value}` or `{:error, reason}` (`reason` is a short string
  naming the problem and its byte offset; it never repeats the input).

  Options: `:max_depth` (default #{@default_max_depth}).
  """
  @spec decode(binary, keyword) :: {:ok, term} | {:error, String.t()}
  def decode(text, opts \\ []) when is_binary(text) do
    max_depth = Keyword.get(opts, :max_depth, @default_max_depth)

    try do
      {value, rest} = value(skip_ws(text), max_depth, byte_size(text))

      case skip_ws(rest) do
        "" -> {:ok, value}
        other -> fail("unexpected data after the value", byte_size(text) - byte_size(other))
      end
    catch
      {:json_error, reason} -> {:error, reason}
    end
  end

  @doc "Like `decode/2` but raises `ArgumentError`."
  @spec decode!(binary, keyword) :: term
  def decode!(text, opts \\ []) do
    case decode(text, opts) do
      {:ok, value} -> value
      {:error, reason} -> raise ArgumentError, "invalid JSON: " <> reason
    end
  end

  @doc "Encodes `value` as JSON text (a binary). Raises `ArgumentError` for what JSON cannot hold."
  @spec encode!(term) :: binary
  def encode!(value), do: value |> encode_value() |> IO.iodata_to_binary()

  @doc "Encodes `value`, returning `{:ok, binary}` or `{:error, reason}`."
  @spec encode(term) :: {:ok, binary} | {:error, String.t()}
  def encode(value) do
    {:ok, encode!(value)}
  rescue
    e in ArgumentError -> {:error, Exception.message(e)}
  end

  # --- decoding -------------------------------------------------------------------------------

  defp fail(what, offset), do: throw({:json_error, "#{what} at byte #{offset}"})

  defp skip_ws(<<c, rest::binary>>) when c in [?\s, ?\t, ?\n, ?\r], do: skip_ws(rest)
  defp skip_ws(rest), do: rest

  # `total` is the input's size, so offsets can be reported from what is left.
  defp value(<<?{, rest::binary>>, depth, total), do: object(rest, depth - 1, total)
  defp value(<<?[, rest::binary>>, depth, total), do: array(rest, depth - 1, total)
  defp value(<<?", rest::binary>>, _depth, total), do: string(rest, [], total)
  defp value(<<"true", rest::binary>>, _, _), do: {true, rest}
  defp value(<<"false", rest::binary>>, _, _), do: {false, rest}
  defp value(<<"null", rest::binary>>, _, _), do: {nil, rest}

  defp value(<<c, _::binary>> = text, _, total) when c == ?- or c in ?0..?9,
    do: number(text, total)

  defp value("", _, total), do: fail("unexpected end of input", total)
  defp value(rest, _, total), do: fail("unexpected character", total - byte_size(rest))

  defp object(_rest, depth, total) when depth < 0, do: fail("nesting too deep", total)

  defp object(text, depth, total) do
    case skip_ws(text) do
      <<?}, rest::binary>> -> {%{}, rest}
      rest -> members(rest, depth, total, %{})
    end
  end

  defp members(<<?", rest::binary>>, depth, total, acc) do
    {key, rest} = string(rest, [], total)

    case skip_ws(rest) do
      <<?:, rest::binary>> ->
        {val, rest} = value(skip_ws(rest), depth, total)
        acc = Map.put(acc, key, val)

        case skip_ws(rest) do
          <<?,, rest::binary>> -> members(skip_ws(rest), depth, total, acc)
          <<?}, rest::binary>> -> {acc, rest}
          rest -> fail("expected , or } in an object", total - byte_size(rest))
        end

      rest ->
        fail("expected : after a member name", total - byte_size(rest))
    end
  end

  defp members(rest, _, total, _), do: fail("expected a member name", total - byte_size(rest))

  defp array(_rest, depth, total) when depth < 0, do: fail("nesting too deep", total)

  defp array(text, depth, total) do
    case skip_ws(text) do
      <<?], rest::binary>> -> {[], rest}
      rest -> elements(rest, depth, total, [])
    end
  end

  defp elements(text, depth, total, acc) do
    {val, rest} = value(text, depth, total)

    case skip_ws(rest) do
      <<?,, rest::binary>> -> elements(skip_ws(rest), depth, total, [val | acc])
      <<?], rest::binary>> -> {Enum.reverse([val | acc]), rest}
      rest -> fail("expected , or ] in an array", total - byte_size(rest))
    end
  end

  # Strings: runs of plain bytes are taken whole, then checked as UTF-8 once.
  defp string(text, acc, total) do
    {run, rest} = plain_run(text, 0)
    acc = [acc | run]

    case rest do
      <<?", rest::binary>> ->
        bin = IO.iodata_to_binary(acc)

        if String.valid?(bin),
          do: {bin, rest},
          else: fail("invalid UTF-8 in a string", total - byte_size(rest))

      <<?\\, rest::binary>> ->
        {piece, rest} = escape(rest, total)
        string(rest, [acc | piece], total)

      "" ->
        fail("unterminated string", total)

      _control ->
        fail("unescaped control character in a string", total - byte_size(rest))
    end
  end

  defp plain_run(text, n) do
    case text do
      <<_::binary-size(n), c, _::binary>> when c != ?" and c != ?\\ and c >= 0x20 ->
        plain_run(text, n + 1)

      <<run::binary-size(n), rest::binary>> ->
        {run, rest}
    end
  end

  defp escape(<<c, rest::binary>>, _total) when c in [?", ?\\, ?/], do: {<<c>>, rest}
  defp escape(<<?b, rest::binary>>, _), do: {"\b", rest}
  defp escape(<<?f, rest::binary>>, _), do: {"\f", rest}
  defp escape(<<?n, rest::binary>>, _), do: {"\n", rest}
  defp escape(<<?r, rest::binary>>, _), do: {"\r", rest}
  defp escape(<<?t, rest::binary>>, _), do: {"\t", rest}

  defp escape(<<?u, rest::binary>>, total) do
    {code, rest} = hex4(rest, total)

    cond do
      code in 0xD800..0xDBFF ->
        case rest do
          <<?\\, ?u, rest2::binary>> ->
            {low, rest2} = hex4(rest2, total)

            if low in 0xDC00..0xDFFF do
              {<<0x10000 + (code - 0xD800) * 0x400 + (low - 0xDC00)::utf8>>, rest2}
            else
              fail("a high surrogate without its low surrogate", total - byte_size(rest))
            end

          _ ->
            fail("a high surrogate without its low surrogate", total - byte_size(rest))
        end

      code in 0xDC00..0xDFFF ->
        fail("a lone low surrogate", total - byte_size(rest))

      true ->
        {<<code::utf8>>, rest}
    end
  end

  defp escape(rest, total), do: fail("invalid escape", total - byte_size(rest))

  defp hex4(<<h::binary-size(4), rest::binary>> = text, total) do
    case Integer.parse(h, 16) do
      {code, ""} when code >= 0 ->
        if h =~ ~r/\A[0-9a-fA-F]{4}\z/,
          do: {code, rest},
          else: fail("invalid \\u escape", total - byte_size(text))

      _ ->
        fail("invalid \\u escape", total - byte_size(text))
    end
  end

  defp hex4(text, total), do: fail("invalid \\u escape", total - byte_size(text))

  @number ~r/\A-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/

  defp number(text, total) do
    case Regex.run(@number, text, capture: :all) do
      [literal | parts] ->
        rest = binary_part(text, byte_size(literal), byte_size(text) - byte_size(literal))
        {to_number(literal, parts, total - byte_size(text)), rest}

      nil ->
        fail("invalid number", total - byte_size(text))
    end
  end

  defp to_number(literal, parts, offset) do
    if Enum.all?(parts, &(&1 == "")) do
      String.to_integer(literal)
    else
      # Elixir's float parser wants a fraction before an exponent: "1e5" -> "1.0e5".
      normalized = Regex.replace(~r/^(-?[0-9]+)([eE])/, literal, "\\1.0\\2")

      case Float.parse(normalized) do
        {float, ""} -> float
        _ -> fail("number out of range", offset)
      end
    end
  rescue
    ArgumentError -> fail("number out of range", offset)
  end

  # --- encoding -------------------------------------------------------------------------------

  defp encode_value(nil), do: "null"
  defp encode_value(true), do: "true"
  defp encode_value(false), do: "false"
  defp encode_value(v) when is_atom(v), do: encode_string(Atom.to_string(v))
  defp encode_value(v) when is_binary(v), do: encode_string(v)
  defp encode_value(v) when is_integer(v), do: Integer.to_string(v)
  defp encode_value(v) when is_float(v), do: Float.to_string(v)

  defp encode_value(v) when is_list(v),
    do: [?[, v |> Enum.map(&encode_value/1) |> Enum.intersperse(?,), ?]]

  defp encode_value(%_{} = v),
    do: raise(ArgumentError, "cannot encode a #{inspect(v.__struct__)}")

  defp encode_value(v) when is_map(v) do
    members =
      v
      |> Enum.map(fn {k, val} -> [encode_key(k), ?:, encode_value(val)] end)
      |> Enum.intersperse(?,)

    [?{, members, ?}]
  end

  defp encode_value(v), do: raise(ArgumentError, "cannot encode #{inspect(v)} as JSON")

  defp encode_key(k) when is_binary(k), do: encode_string(k)
  defp encode_key(k) when is_atom(k) and not is_nil(k), do: encode_string(Atom.to_string(k))

  defp encode_key(k),
    do: raise(ArgumentError, "an object key must be a string, not #{inspect(k)}")

  defp encode_string(s) do
    unless String.valid?(s), do: raise(ArgumentError, "a string is not valid UTF-8")
    [?", escape_string(s, s, 0, 0, []), ?"]
  end

  # Copies unescaped runs of the original binary as slices, escaping what must be escaped.
  defp escape_string(<<>>, orig, start, len, acc), do: [acc | binary_part(orig, start, len)]

  defp escape_string(<<c::utf8, rest::binary>>, orig, start, len, acc) do
    escaped =
      case c do
        ?" -> "\\\""
        ?\\ -> "\\\\"
        ?\n -> "\\n"
        ?\r -> "\\r"
        ?\t -> "\\t"
        ?\b -> "\\b"
        ?\f -> "\\f"
        c when c < 0x20 or c in [0x2028, 0x2029] -> unicode_escape(c)
        _ -> nil
      end

    size = byte_size(<<c::utf8>>)

    if escaped do
      acc = [acc, binary_part(orig, start, len), escaped]
      escape_string(rest, orig, start + len + size, 0, acc)
    else
      escape_string(rest, orig, start, len + size, acc)
    end
  end

  defp unicode_escape(c),
    do: "\\u" <> String.pad_leading(Integer.to_string(c, 16), 4, "0")
end
