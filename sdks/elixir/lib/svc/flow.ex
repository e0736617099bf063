defmodule Svc.Pending do
  @moduledoc """
  What the application keeps (server-side, bound to the browser's session) between sending the
  browser to svc and handling its callback. Use it once.

  `:nonce` is `nil` unless the scope has `openid`.
  """
  defstruct [:state, :nonce, :code_verifier, :redirect_uri]

  @type t :: %__MODULE__{
          state: String.t(),
          nonce: String.t() | nil,
          code_verifier: String.t(),
          redirect_uri: String.t()
        }
end

defmodule Svc.TokenSet do
  @moduledoc """
  A token endpoint answer (RFC 6749 §5.1), with the ID token's validated claims in
  `:id_token_claims` when there is an ID token.
  """
  defstruct access_token: nil,
            token_type: nil,
            expires_in: 0,
            refresh_token: nil,
            scope: nil,
            id_token: nil,
            id_token_claims: nil

  @type t :: %__MODULE__{
          access_token: String.t(),
          token_type: String.t() | nil,
          expires_in: non_neg_integer,
          refresh_token: String.t() | nil,
          scope: String.t() | nil,
          id_token: String.t() | nil,
          id_token_claims: map | nil
        }

  @doc "The ID token's `sub`, or `nil` without one."
  @spec subject(t) :: String.t() | nil
  def subject(%__MODULE__{id_token_claims: %{"sub" => sub}}) when is_binary(sub), do: sub
  def subject(_), do: nil

  @doc false
  def from_json(%{"access_token" => at} = doc) when is_binary(at) and at != "" do
    text = fn name -> if is_binary(doc[name]), do: doc[name] end

    {:ok,
     %__MODULE__{
       access_token: at,
       token_type: text.("token_type"),
       expires_in: if(is_integer(doc["expires_in"]), do: doc["expires_in"], else: 0),
       refresh_token: text.("refresh_token"),
       scope: text.("scope"),
       id_token: text.("id_token")
     }}
  end

  def from_json(_), do: :error
end

defmodule Svc.Flow do
  @moduledoc """
  The pure parts of the authorization code flow, with no I/O: PKCE (RFC 7636), random values,
  the callback checks (RFC 6749 §10.12 state, RFC 9207 `iss`) and the ID token claim rules
  (OpenID Connect Core 1.0 §3.1.3.7 items 2–11). `Svc.Client` uses them; they are public so an
  application can test its own wiring.
  """

  @id_token_leeway 60

  @doc "The clock skew tolerated on an ID token's `exp` and `iat`, in seconds."
  def id_token_leeway, do: @id_token_leeway

  @doc "256 bits from the system's CSPRNG, base64url (43 characters)."
  @spec random_token() :: String.t()
  def random_token, do: Svc.JWT.b64(:crypto.strong_rand_bytes(32))

  @doc "`BASE64URL(SHA256(verifier))` (RFC 7636 §4.2)."
  @spec pkce_challenge(String.t()) :: String.t()
  def pkce_challenge(verifier), do: Svc.JWT.b64(:crypto.hash(:sha256, verifier))

  @doc """
  Compares two strings in constant time (for equal lengths; a length difference shows, as
  with any such comparison).
  """
  @spec secure_equal?(binary, binary) :: boolean
  def secure_equal?(a, b) when is_binary(a) and is_binary(b) do
    # Hashing first gives :crypto.hash_equals/2 the equal sizes it needs.
    :crypto.hash_equals(:crypto.hash(:sha256, a), :crypto.hash(:sha256, b)) and
      byte_size(a) == byte_size(b)
  end

  def secure_equal?(_, _), do: false

  @doc """
  Checks a callback (a URL, or only its query) against `pending` and returns its code: `state`
  first (constant time), then `iss` (svc always sends it, so its absence is a mix-up), then an
  `error` (`%Svc.Error{endpoint: "authorization"}`), then the code.

  Errors: `:state_mismatch`, `:issuer_mismatch`, `:missing_code`, `%Svc.Error{}`, or
  `%Svc.ClientError{}` when a parameter appears twice or the query does not parse.
  """
  @spec code_from_callback(String.t(), Svc.Pending.t(), String.t()) ::
          {:ok, String.t()}
          | {:error, :state_mismatch | :issuer_mismatch | :missing_code}
          | {:error, Svc.Error.t() | Svc.ClientError.t()}
  def code_from_callback(callback, %Svc.Pending{} = pending, issuer) do
    query =
      case String.split(callback, "?", parts: 2) do
        [_, q] -> q
        [q] -> q
      end
      |> String.split("#", parts: 2)
      |> hd()

    with {:ok, pairs} <- parse_query(query),
         :ok <- no_repeats(pairs) do
      get = fn name -> Enum.find_value(pairs, fn {k, v} -> if k == name, do: v end) end

      cond do
        not is_binary(pending.state) or pending.state == "" or
            not secure_equal?(get.("state") || "", pending.state) ->
          {:error, :state_mismatch}

        get.("iss") != issuer ->
          {:error, :issuer_mismatch}

        (get.("error") || "") != "" ->
          {:error,
           %Svc.Error{
             endpoint: "authorization",
             status: 0,
             code: get.("error"),
             description: get.("error_description")
           }}

        (get.("code") || "") == "" ->
          {:error, :missing_code}

        true ->
          {:ok, get.("code")}
      end
    end
  end

  # URI.query_decoder/1 passes a malformed escape through as text; it is refused instead.
  defp parse_query(query) do
    if Regex.match?(~r/%(?![0-9a-fA-F]{2})/, query) do
      {:error, Svc.ClientError.exception("svc: the callback is not a query string")}
    else
      {:ok, query |> URI.query_decoder() |> Enum.to_list()}
    end
  end

  defp no_repeats(pairs) do
    repeated =
      Enum.any?(["state", "iss", "code", "error"], fn name ->
        Enum.count(pairs, fn {k, _} -> k == name end) > 1
      end)

    if repeated,
      do: {:error, Svc.ClientError.exception("svc: a callback parameter appears twice")},
      else: :ok
  end

  @doc """
  Core §3.1.3.7 items 2–11 on verified claims: `iss`, `aud`/`azp`, `exp`/`iat` (60 s leeway),
  `sub`, and `nonce` unless `nonce` is `nil` (refresh). `now` is Unix seconds.
  """
  @spec check_id_token_claims(map, String.t(), String.t(), String.t() | nil, integer) ::
          :ok | {:error, Svc.IDTokenError.t()}
  def check_id_token_claims(claims, issuer, client_id, nonce, now) do
    audiences =
      case claims["aud"] do
        aud when is_binary(aud) -> [aud]
        list when is_list(list) -> Enum.filter(list, &is_binary/1)
        _ -> []
      end

    azp = claims["azp"]
    has_azp = is_binary(azp)
    exp = claims["exp"]
    iat = claims["iat"]

    cond do
      claims["iss"] != issuer ->
        bad("issued by another issuer")

      client_id not in audiences or (has_azp and azp != client_id) or
          (not has_azp and length(audiences) > 1) ->
        bad("issued to another client")

      not is_number(exp) or not is_number(iat) ->
        bad("a required claim is missing")

      now >= trunc(exp) + @id_token_leeway ->
        bad("expired")

      trunc(iat) > now + @id_token_leeway ->
        bad("issued in the future")

      not is_binary(claims["sub"]) or claims["sub"] == "" ->
        bad("a required claim is missing")

      nonce not in [nil, ""] and not secure_equal?(claims["nonce"], nonce) ->
        bad("the nonce does not match the authorization request")

      true ->
        :ok
    end
  end

  defp bad(reason), do: {:error, %Svc.IDTokenError{reason: reason}}
end
