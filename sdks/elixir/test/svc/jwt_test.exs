defmodule Svc.JWTTest do
  use ExUnit.Case, async: true
  import Bitwise

  alias Svc.{Client, JWT, KeySet}
  alias Svc.Test.Keys

  @issuer "https://acme.id.example"
  @jwks "https://acme.id.example/.well-known/jwks.json"

  test "signatures verify only with the right key and algorithm" do
    for {alg, {priv, jwk}, {_, other}} <- [
          {"RS256", Keys.rsa(), Keys.rsa()},
          {"ES256", Keys.ec(), Keys.ec()},
          {"EdDSA", Keys.ed(), Keys.ed()}
        ] do
      token = JWT.sign(%{"alg" => alg, "kid" => "k1"}, %{"sub" => "usr_1"}, priv)
      {:ok, {%{"alg" => ^alg}, parts}} = JWT.split(token)
      {:ok, key} = JWT.public_key(jwk, alg)
      assert JWT.verify(parts, alg, key) == {:ok, %{"sub" => "usr_1"}}, alg
      {:ok, wrong} = JWT.public_key(other, alg)
      assert JWT.verify(parts, alg, wrong) == {:error, :signature}, alg
      [h, _, s] = parts
      tampered = [h, JWT.b64(~s({"sub":"usr_admin"})), s]
      assert JWT.verify(tampered, alg, key) == {:error, :signature}, alg
      assert JWT.verify([h, Enum.at(parts, 1), ""], alg, key) == {:error, :signature}, alg
    end
  end

  test "a JWK is a key for one algorithm only" do
    {_, ec} = Keys.ec()
    {_, rsa} = Keys.rsa()
    {_, ed} = Keys.ed()
    assert {:error, :unknown_key} = JWT.public_key(ec, "RS256")
    assert {:error, :unknown_key} = JWT.public_key(ec, "EdDSA")
    assert {:error, :unknown_key} = JWT.public_key(rsa, "ES256")
    assert {:error, :unknown_key} = JWT.public_key(ed, "ES256")
    assert {:error, :unknown_key} = JWT.public_key(ec, "HS256")
    assert {:error, :unknown_key} = JWT.public_key(ec, "none")
    assert {:error, :unknown_key} = JWT.public_key(Map.put(ec, "use", "enc"), "ES256")
    assert {:error, :unknown_key} = JWT.public_key(Map.put(ec, "alg", "ES384"), "ES256")
    assert {:ok, _} = JWT.public_key(Map.merge(ec, %{"use" => "sig", "alg" => "ES256"}), "ES256")
    # A point off the curve.
    {:ok, <<y::256>>} = JWT.unb64(ec["y"])
    off = Map.put(ec, "y", JWT.b64(<<rem(y + 1, 1 <<< 256)::256>>))
    assert {:error, :unknown_key} = JWT.public_key(off, "ES256")
    # A short RSA modulus.
    assert {:error, :unknown_key} =
             JWT.public_key(Map.put(rsa, "n", JWT.b64(<<1::512>>)), "RS256")
  end

  test "garbage never reaches a key" do
    for garbage <- [
          "",
          "a.b",
          "a.b.c.d",
          "!!.!!.!!",
          "e30..sig",
          JWT.b64("[]") <> ".e30.x",
          String.duplicate("a", JWT.max_token_bytes() + 1),
          nil
        ] do
      assert JWT.split(garbage) == {:error, :malformed}, inspect(garbage)
    end
  end

  describe "ID tokens" do
    setup do
      {priv, jwk} = Keys.rsa()
      {ec_priv, ec_jwk} = Keys.ec()

      doc = %{
        "keys" => [Map.put(jwk, "kid", "k1"), Map.put(ec_jwk, "kid", "k2"), %{"kty" => "weird"}]
      }

      {:ok, keys} = KeySet.start_link(@jwks, http: Keys.serving(@jwks, doc))

      client = %Client{
        client_id: "app_1",
        id_token_alg: "RS256",
        metadata: %{issuer: @issuer},
        keys: keys
      }

      now = System.os_time(:second)

      claims = %{
        "iss" => @issuer,
        "aud" => "app_1",
        "sub" => "usr_1",
        "exp" => now + 300,
        "iat" => now,
        "nonce" => "n-1"
      }

      %{client: client, priv: priv, ec_priv: ec_priv, claims: claims}
    end

    test "a good one passes; the header's alg, typ and crit are checked", ctx do
      sign = fn header, claims, key -> JWT.sign(header, claims, key) end
      good = sign.(%{"alg" => "RS256", "kid" => "k1"}, ctx.claims, ctx.priv)
      assert {:ok, %{"sub" => "usr_1"}} = Client.validate_id_token(ctx.client, good, "n-1")

      assert {:error, %Svc.IDTokenError{reason: r}} =
               Client.validate_id_token(ctx.client, good, "n-2")

      assert r =~ "nonce"

      # Another algorithm than the registered one, even with a valid key and signature.
      es = sign.(%{"alg" => "ES256", "kid" => "k2"}, ctx.claims, ctx.ec_priv)
      assert {:error, %Svc.IDTokenError{}} = Client.validate_id_token(ctx.client, es, "n-1")
      assert {:ok, _} = Client.validate_id_token(%{ctx.client | id_token_alg: "ES256"}, es, "n-1")

      [_, payload, _] = String.split(good, ".")
      none = JWT.b64(~s({"alg":"none"})) <> "." <> payload <> "."
      assert {:error, %Svc.IDTokenError{}} = Client.validate_id_token(ctx.client, none, nil)

      at = sign.(%{"alg" => "RS256", "kid" => "k1", "typ" => "at+jwt"}, ctx.claims, ctx.priv)

      assert {:error, %Svc.IDTokenError{reason: "not an ID token"}} =
               Client.validate_id_token(ctx.client, at, nil)

      crit = sign.(%{"alg" => "RS256", "kid" => "k1", "crit" => ["x"]}, ctx.claims, ctx.priv)
      assert {:error, %Svc.IDTokenError{}} = Client.validate_id_token(ctx.client, crit, nil)

      odd_kid = sign.(%{"alg" => "RS256", "kid" => %{"k" => 1}}, ctx.claims, ctx.priv)
      assert {:error, %Svc.IDTokenError{}} = Client.validate_id_token(ctx.client, odd_kid, nil)

      unknown = sign.(%{"alg" => "RS256", "kid" => "k9"}, ctx.claims, ctx.priv)

      assert {:error, %Svc.IDTokenError{reason: r}} =
               Client.validate_id_token(ctx.client, unknown, nil)

      assert r =~ "key"

      # Two hours later it has expired.
      later = System.os_time(:second) + 7200

      assert {:error, %Svc.IDTokenError{reason: "expired"}} =
               Client.validate_id_token(ctx.client, good, nil, now: later)
    end

    test "unknown kids refresh the keys at most once a minute", ctx do
      unknown = JWT.sign(%{"alg" => "RS256", "kid" => "k9"}, ctx.claims, ctx.priv)
      good = JWT.sign(%{"alg" => "RS256", "kid" => "k1"}, ctx.claims, ctx.priv)
      assert {:ok, _} = Client.validate_id_token(ctx.client, good, nil)
      assert_received {:fetched, @jwks}
      assert {:error, _} = Client.validate_id_token(ctx.client, unknown, nil)
      assert_received {:fetched, @jwks}
      assert {:error, _} = Client.validate_id_token(ctx.client, unknown, nil)
      assert {:ok, _} = Client.validate_id_token(ctx.client, good, nil)
      refute_received {:fetched, _}
    end
  end
end
