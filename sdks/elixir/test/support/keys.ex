defmodule Svc.Test.Keys do
  @moduledoc "Keys generated per test run, their public JWKs, and a JWKS served by a stub transport."

  alias Svc.JWT

  def rsa do
    {[e, n], priv} = :crypto.generate_key(:rsa, {2048, 65_537})
    {{:rsa, priv}, %{"kty" => "RSA", "n" => JWT.b64(n), "e" => JWT.b64(e)}}
  end

  def ec do
    {<<4, x::binary-size(32), y::binary-size(32)>>, priv} =
      :crypto.generate_key(:ecdh, :secp256r1)

    {{:ecdsa, priv}, %{"kty" => "EC", "crv" => "P-256", "x" => JWT.b64(x), "y" => JWT.b64(y)}}
  end

  def ed do
    {pub, priv} = :crypto.generate_key(:eddsa, :ed25519)
    {{:eddsa, priv}, %{"kty" => "OKP", "crv" => "Ed25519", "x" => JWT.b64(pub)}}
  end

  @doc "A transport answering `uri` with `doc` (JSON) and counting its calls in the caller's mailbox."
  def serving(uri, doc, test_pid \\ self()) do
    fn %{url: url}, _opts ->
      send(test_pid, {:fetched, url})

      if url == uri,
        do: {:ok, %{status: 200, headers: [], body: Svc.JSON.encode!(doc)}},
        else: {:ok, %{status: 404, headers: [], body: ""}}
    end
  end
end
