defmodule Svc.Webhook do
  @moduledoc """
  Receiving svc webhooks: the receiver rules of signature suite `svc-webhook-v1`.

    1. a missing or unsupported `X-SVC-Signature-Suite` is refused;
    2. the signed string is built from the exact raw body:
       `{X-SVC-Delivery}.{X-SVC-Timestamp}.{body}`;
    3. its HMAC-SHA256 is computed with each subscription secret (UTF-8 bytes, `whsec_` prefix
       included);
    4. it is compared with every `sha256=<hex>` value of `X-SVC-Signature-256` in constant time
       (two values arrive while the sender rotates its secret);
    5. a timestamp older than the smaller of `X-SVC-Signature-Max-Age` and the receiver's own
       ceiling is refused, as is one more than a minute in the future;
    6. deduplicate on the returned `:delivery_id` before acting (delivery is at-least-once);
    7. nothing here parses the body: verify first, then parse.

  Verify the body exactly as received: in Plug, read it with `Plug.Conn.read_body/2` before any
  body parser, or keep a copy of it.
  """

  @suite "svc-webhook-v1"
  @max_body 1024 * 1024

  defstruct [:delivery_id, :event, :timestamp, :body]

  @type t :: %__MODULE__{
          delivery_id: String.t(),
          event: String.t() | nil,
          timestamp: integer,
          body: binary
        }

  defmodule Error do
    @moduledoc """
    A delivery that failed verification. `:reason` is one of `:suite`, `:too_large`,
    `:missing_headers`, `:timestamp`, `:no_signature`, `:signature`, `:future`, `:stale`.
    """
    defexception [:reason, :message]
    @type t :: %__MODULE__{reason: atom, message: String.t()}
  end

  @doc "The only signature suite accepted."
  def suite, do: @suite

  @doc """
  Checks a delivery's `headers` and exact raw `body` against the subscription `secrets`, with
  the receiver's ceiling on age (`ceiling` seconds), at `now` (Unix seconds, default the
  current time).

  `headers` is a map or a list of `{name, value}` pairs; names are matched case-insensitively
  and the first value of a name counts.
  """
  @spec verify(
          map | [{String.t(), String.t()}],
          binary,
          [String.t()],
          non_neg_integer,
          integer | nil
        ) ::
          {:ok, t} | {:error, Error.t()}
  def verify(headers, body, secrets, ceiling, now \\ nil) when is_binary(body) do
    now = now || System.os_time(:second)
    get = fn name -> header(headers, name) end
    delivery = get.("x-svc-delivery")
    stamp = get.("x-svc-timestamp")

    cond do
      get.("x-svc-signature-suite") != @suite ->
        error(:suite, "unsupported or missing signature suite")

      byte_size(body) > @max_body ->
        error(:too_large, "webhook body too large")

      delivery in [nil, ""] or stamp in [nil, ""] ->
        error(:missing_headers, "missing X-SVC-Delivery or X-SVC-Timestamp")

      not Regex.match?(~r/\A-?[0-9]{1,19}\z/, stamp) ->
        error(:timestamp, "X-SVC-Timestamp is not a Unix time in seconds")

      true ->
        check(delivery, String.to_integer(stamp), stamp, get, body, secrets, ceiling, now)
    end
  end

  defp check(delivery, timestamp, stamp, get, body, secrets, ceiling, now) do
    tags =
      for value <- String.split(get.("x-svc-signature-256") || "", " "),
          "sha256=" <> hex <- [value],
          byte_size(hex) == 64,
          {:ok, tag} <- [Base.decode16(hex, case: :mixed)],
          do: tag

    signed = [delivery, ?., stamp, ?., body]

    # Every secret against every tag, with no early exit, so timing says nothing about which.
    matched =
      Enum.reduce(secrets, false, fn secret, acc ->
        expected = :crypto.mac(:hmac, :sha256, secret, signed)
        Enum.reduce(tags, acc, fn tag, acc -> :crypto.hash_equals(expected, tag) or acc end)
      end)

    window =
      case Integer.parse(get.("x-svc-signature-max-age") || "") do
        {sender, ""} when sender >= 0 -> min(sender, ceiling)
        _ -> ceiling
      end

    age = now - timestamp

    cond do
      tags == [] ->
        error(:no_signature, "X-SVC-Signature-256 holds no sha256=<hex> value")

      not matched ->
        error(:signature, "webhook signature mismatch")

      age < -60 ->
        error(:future, "webhook timestamp is in the future")

      age > window ->
        error(:stale, "webhook delivery is #{age} s old; the window is #{window} s")

      true ->
        {:ok,
         %__MODULE__{
           delivery_id: delivery,
           event: get.("x-svc-event"),
           timestamp: timestamp,
           body: body
         }}
    end
  end

  defp header(headers, name) do
    Enum.find_value(headers, fn {k, v} -> if String.downcase(to_string(k)) == name, do: v end)
  end

  defp error(reason, message), do: {:error, %Error{reason: reason, message: "svc: " <> message}}
end
