defmodule Svc.DPoPTest do
  use ExUnit.Case, async: true

  alias Svc.{Client, DPoP}

  # Checks a proof's shape and signature apart from the code that made it.
  defp decode_proof(proof) do
    [header64, claims64, sig64] = String.split(proof, ".")
    header = header64 |> Base.url_decode64!(padding: false) |> Svc.JSON.decode!()
    claims = claims64 |> Base.url_decode64!(padding: false) |> Svc.JSON.decode!()
    assert %{"typ" => "dpop+jwt", "alg" => "ES256", "jwk" => jwk} = header
    assert %{"kty" => "EC", "crv" => "P-256"} = jwk
    refute Map.has_key?(jwk, "d")
    x = Base.url_decode64!(jwk["x"], padding: false)
    y = Base.url_decode64!(jwk["y"], padding: false)
    assert byte_size(x) == 32 and byte_size(y) == 32

    <<r::unsigned-big-size(256), s::unsigned-big-size(256)>> =
      Base.url_decode64!(sig64, padding: false)

    der = :public_key.der_encode(:"ECDSA-Sig-Value", {:"ECDSA-Sig-Value", r, s})

    assert :crypto.verify(:ecdsa, :sha256, header64 <> "." <> claims64, der, [
             <<4, x::binary, y::binary>>,
             :secp256r1
           ])

    {header, claims}
  end

  test "proofs follow RFC 9449 and the thumbprint RFC 7638" do
    key = DPoP.generate_key()

    proof =
      DPoP.proof(key, "GET", "https://acme.id.example/userinfo?x=1#f",
        access_token: "at-123",
        now: 1_800_000_000
      )

    {header, claims} = decode_proof(proof)

    assert %{"htm" => "GET", "htu" => "https://acme.id.example/userinfo", "iat" => 1_800_000_000} =
             claims

    assert claims["ath"] == Base.url_encode64(:crypto.hash(:sha256, "at-123"), padding: false)
    refute Map.has_key?(claims, "nonce")
    assert byte_size(claims["jti"]) >= 16

    jwk = header["jwk"]

    canonical = Enum.map_join(["crv", "kty", "x", "y"], ",", fn k -> ~s("#{k}":"#{jwk[k]}") end)

    assert DPoP.thumbprint(key) ==
             Base.url_encode64(:crypto.hash(:sha256, "{" <> canonical <> "}"), padding: false)

    {_, again} =
      decode_proof(DPoP.proof(key, "POST", "https://acme.id.example/oauth/token", nonce: "n-1"))

    assert again["nonce"] == "n-1"
    assert again["jti"] != claims["jti"]
    refute Map.has_key?(again, "ath")
  end

  test "token requests carry proofs and follow the server's nonce once" do
    key = DPoP.generate_key()
    endpoint = "https://acme.id.example/oauth/token"
    parent = self()

    transport = fn nonce_wanted ->
      fn request, _opts ->
        {_, proof} = List.keyfind(request.headers, "dpop", 0)
        {_, claims} = decode_proof(proof)
        send(parent, {:proof, claims})

        if claims["nonce"] == nonce_wanted do
          {:ok,
           %{
             status: 200,
             headers: [],
             body: ~s({"access_token":"at","token_type":"DPoP","expires_in":300,"scope":""})
           }}
        else
          {:ok,
           %{
             status: 400,
             headers: [{"dpop-nonce", "n-2"}],
             body: ~s({"error":"use_dpop_nonce"})
           }}
        end
      end
    end

    client = %Client{
      client_id: "app_1",
      client_secret: "s",
      metadata: %{token_endpoint: endpoint},
      dpop: key,
      http: transport.("n-2")
    }

    assert {:ok, %{token_type: "DPoP"}} = Client.client_credentials(client)
    assert_received {:proof, %{"htm" => "POST", "htu" => ^endpoint} = first}
    refute Map.has_key?(first, "nonce")
    assert_received {:proof, %{"nonce" => "n-2"}}

    # A server that keeps asking gets one retry, then its error.
    stubborn = %Client{client | http: transport.("never")}
    assert {:error, %Svc.Error{code: "use_dpop_nonce"}} = Client.client_credentials(stubborn)
    assert_received {:proof, _}
    assert_received {:proof, _}
    refute_received {:proof, _}
  end
end
