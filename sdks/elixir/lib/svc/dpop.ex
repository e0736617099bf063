defmodule Svc.DPoP do
  @moduledoc """
  DPoP (RFC 9449) on the client side: a P-256 key whose ES256 proofs bind the tokens svc
  issues to it, so a stolen token is useless without the key.

  Give a key to `Svc.Client.discover/2` (`dpop: Svc.DPoP.generate_key()`): every token request
  then carries a proof (the answer says `token_type` `"DPoP"` and the token's `cnf.jkt` is
  `thumbprint/1` of the key), and `Svc.Client.userinfo/3` presents the token with
  `Authorization: DPoP` and a proof naming it (`ath`). When svc asks for a server nonce
  (`use_dpop_nonce` with a `DPoP-Nonce` header, §8), the request is sent once more with it.

  `Svc.Management` still presents bearer tokens: give it a client without a key.
  """

  @typedoc "A DPoP key: the private scalar and the public point (uncompressed)."
  @opaque key :: %{private: binary, public: binary}

  @doc "A fresh P-256 key (keep one per client; tokens bound to it need it)."
  @spec generate_key() :: key
  def generate_key do
    {public, private} = :crypto.generate_key(:ecdh, :secp256r1)
    %{private: private, public: public}
  end

  @doc "The key's public JWK (coordinates as 32-byte values, RFC 7518 §6.2.1)."
  @spec public_jwk(key) :: %{String.t() => String.t()}
  def public_jwk(%{public: <<4, x::binary-size(32), y::binary-size(32)>>}) do
    %{"kty" => "EC", "crv" => "P-256", "x" => b64(x), "y" => b64(y)}
  end

  @doc "The key's RFC 7638 SHA-256 thumbprint: the `cnf.jkt` of the tokens bound to it."
  @spec thumbprint(key) :: String.t()
  def thumbprint(key) do
    jwk = public_jwk(key)
    # RFC 7638 §3.2: the required members in lexicographic order, no whitespace.
    canonical =
      ~s({"crv":"P-256","kty":"EC","x":") <> jwk["x"] <> ~s(","y":") <> jwk["y"] <> ~s("})

    b64(:crypto.hash(:sha256, canonical))
  end

  @doc """
  A proof for a request with `method` (`"GET"`, `"POST"`…) to `url` (its query and fragment
  are left out, §4.2). Options: `:access_token` (a resource call: adds `ath`), `:nonce` (the
  server's), `:now` (Unix seconds).
  """
  @spec proof(key, String.t(), String.t(), keyword) :: String.t()
  def proof(key, method, url, opts \\ []) do
    htu = %URI{URI.parse(url) | query: nil, fragment: nil} |> URI.to_string()

    claims =
      %{
        "jti" => b64(:crypto.strong_rand_bytes(16)),
        "htm" => method,
        "htu" => htu,
        "iat" => Keyword.get_lazy(opts, :now, fn -> System.os_time(:second) end)
      }
      |> put_if("nonce", opts[:nonce])
      |> put_if("ath", opts[:access_token] && b64(:crypto.hash(:sha256, opts[:access_token])))

    header = %{"typ" => "dpop+jwt", "alg" => "ES256", "jwk" => public_jwk(key)}
    Svc.JWT.sign(header, claims, {:ecdsa, key.private})
  end

  defp put_if(map, _key, nil), do: map
  defp put_if(map, key, value), do: Map.put(map, key, value)

  defp b64(bytes), do: Svc.JWT.b64(bytes)
end
