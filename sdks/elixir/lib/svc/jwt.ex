defmodule Svc.JWT do
  @moduledoc """
  Compact JWS verification with an issuer's JWKs (RFC 7515, RFC 7518, RFC 8037), with
  `:crypto` and `:public_key` only: RS256, ES256 and EdDSA (Ed25519).

  The algorithm is always the caller's choice, never the token's: the header's `alg` must equal
  one the caller allows, so `none` and `HS*` (RFC 8725 §2.1, §3.1) never reach a key. A JWK is
  turned into a key for one algorithm only, and only when its `kty`, `crv`, `use` and `alg` fit
  it; an EC point off the P-256 curve is refused.

  Errors are atoms: `:malformed`, `:algorithm`, `:unknown_key`, `:signature`; `reason/1` gives
  their text.
  """

  @max_token_bytes 16 * 1024

  @typedoc "A key ready for `verify/3`."
  @type key ::
          {:rsa, [binary]} | {:ecdsa, binary} | {:eddsa, binary}

  @typedoc "A split token: decoded header and the three base64url parts."
  @type parts :: {map, [String.t()]}

  @doc "The largest token accepted, in bytes, checked before any decoding."
  def max_token_bytes, do: @max_token_bytes

  @doc "The text of an error atom."
  @spec reason(atom) :: String.t()
  def reason(:malformed), do: "not a well-formed signed JWT"
  def reason(:algorithm), do: "signed with an algorithm that is not accepted"
  def reason(:unknown_key), do: "signed with a key the issuer does not publish for this algorithm"
  def reason(:signature), do: "the signature is invalid"
  def reason(other) when is_binary(other), do: other

  @doc "base64url without padding (RFC 7515 §2)."
  @spec b64(binary) :: String.t()
  def b64(data), do: Base.url_encode64(data, padding: false)

  @doc "Decodes base64url without padding; `:error` otherwise."
  @spec unb64(String.t()) :: {:ok, binary} | :error
  def unb64(text) when is_binary(text), do: Base.url_decode64(text, padding: false)
  def unb64(_), do: :error

  @doc """
  Splits a compact JWS and decodes its header (a JSON object). Returns
  `{:ok, {header, [h, p, s]}}` or `{:error, :malformed}`.
  """
  @spec split(String.t()) :: {:ok, parts} | {:error, :malformed}
  def split(token) when is_binary(token) and byte_size(token) <= @max_token_bytes do
    with [h, p, _s] = parts when p != "" <- String.split(token, "."),
         {:ok, raw} <- unb64(h),
         {:ok, %{} = header} <- Svc.JSON.decode(raw) do
      {:ok, {header, parts}}
    else
      _ -> {:error, :malformed}
    end
  end

  def split(_), do: {:error, :malformed}

  @doc """
  The key of `jwk` (a decoded JWK map) for `alg`, or `{:error, :unknown_key}` when the JWK
  cannot verify `alg`.
  """
  @spec public_key(map, String.t()) :: {:ok, key} | {:error, :unknown_key}
  def public_key(jwk, alg) do
    use_ok = jwk["use"] in [nil, "sig"]
    alg_ok = jwk["alg"] in [nil, alg]

    if use_ok and alg_ok, do: key_for(alg, jwk), else: {:error, :unknown_key}
  end

  # Moduli under 1024 bits are refused, as Go's crypto/rsa does.
  defp key_for("RS256", %{"kty" => "RSA", "n" => n, "e" => e}) do
    with {:ok, n} <- unb64(n),
         {:ok, e} <- unb64(e),
         true <- byte_size(e) in 1..4 and byte_size(n) >= 128 do
      {:ok, {:rsa, [e, n]}}
    else
      _ -> {:error, :unknown_key}
    end
  end

  defp key_for("ES256", %{"kty" => "EC", "crv" => "P-256", "x" => x, "y" => y}) do
    with {:ok, <<xi::256>> = x} <- unb64(x),
         {:ok, <<yi::256>> = y} <- unb64(y),
         true <- on_p256?(xi, yi) do
      {:ok, {:ecdsa, <<4, x::binary, y::binary>>}}
    else
      _ -> {:error, :unknown_key}
    end
  end

  defp key_for("EdDSA", %{"kty" => "OKP", "crv" => "Ed25519", "x" => x}) do
    case unb64(x) do
      {:ok, <<_::binary-size(32)>> = x} -> {:ok, {:eddsa, x}}
      _ -> {:error, :unknown_key}
    end
  end

  defp key_for(_, _), do: {:error, :unknown_key}

  # P-256 (SEC 2 §2.4.2): y² = x³ - 3x + b over p.
  @p 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
  @b 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B

  defp on_p256?(x, y) when x < @p and y < @p do
    rem(y * y - (x * x * x - 3 * x + @b), @p) == 0
  end

  defp on_p256?(_, _), do: false

  @doc """
  Checks the signature of `parts` with `key` under `alg` and returns the claims (a JSON
  object). Returns `{:error, :signature}` or `{:error, :malformed}` otherwise.
  """
  @spec verify([String.t()], String.t(), key) :: {:ok, map} | {:error, :signature | :malformed}
  def verify([h, p, s], alg, key) do
    signed = h <> "." <> p

    with {:ok, sig} <- unb64(s),
         true <- signature_ok?(alg, key, signed, sig) || {:error, :signature},
         {:ok, payload} <- unb64(p),
         {:ok, %{} = claims} <- Svc.JSON.decode(payload) do
      {:ok, claims}
    else
      {:error, :signature} -> {:error, :signature}
      _ -> {:error, :malformed}
    end
  end

  defp signature_ok?("RS256", {:rsa, key}, signed, sig) do
    # PKCS #1 v1.5 signatures are as long as the modulus.
    [_e, n] = key
    byte_size(sig) == byte_size(strip_zeros(n)) and safe_verify(:rsa, :sha256, signed, sig, key)
  end

  defp signature_ok?("ES256", {:ecdsa, point}, signed, <<r::256, s::256>>) do
    # RFC 7518 §3.4: R and S, 32 bytes each, not DER; :crypto wants DER.
    der = :public_key.der_encode(:"ECDSA-Sig-Value", {:"ECDSA-Sig-Value", r, s})
    r > 0 and s > 0 and safe_verify(:ecdsa, :sha256, signed, der, [point, :secp256r1])
  end

  defp signature_ok?("EdDSA", {:eddsa, pub}, signed, sig) when byte_size(sig) == 64 do
    safe_verify(:eddsa, :none, signed, sig, [pub, :ed25519])
  end

  defp signature_ok?(_, _, _, _), do: false

  defp safe_verify(type, digest, msg, sig, key) do
    :crypto.verify(type, digest, msg, sig, key)
  rescue
    _ -> false
  catch
    _, _ -> false
  end

  defp strip_zeros(<<0, rest::binary>>), do: strip_zeros(rest)
  defp strip_zeros(n), do: n

  @doc """
  Signs `claims` with `header` (maps): DPoP proofs (`Svc.DPoP`), tests and tools; never used
  by the SDK to trust anything. `key` is `{:rsa, private_key_list}`, `{:ecdsa, private_scalar}` or
  `{:eddsa, private_key}` as `:crypto.generate_key/2` returns them.
  """
  @spec sign(map, map, {:rsa, list} | {:ecdsa, binary} | {:eddsa, binary}) :: String.t()
  def sign(header, claims, key) do
    signing = b64(Svc.JSON.encode!(header)) <> "." <> b64(Svc.JSON.encode!(claims))
    signing <> "." <> b64(raw_signature(key, signing))
  end

  defp raw_signature({:rsa, priv}, msg), do: :crypto.sign(:rsa, :sha256, msg, priv)
  defp raw_signature({:eddsa, priv}, msg), do: :crypto.sign(:eddsa, :none, msg, [priv, :ed25519])

  defp raw_signature({:ecdsa, priv}, msg) do
    der = :crypto.sign(:ecdsa, :sha256, msg, [priv, :secp256r1])
    {:"ECDSA-Sig-Value", r, s} = :public_key.der_decode(:"ECDSA-Sig-Value", der)
    <<r::256, s::256>>
  end

  @doc false
  # Exposed for tests: whether (x, y) is on P-256.
  def on_curve?(x, y), do: on_p256?(x, y)
end
