defmodule Svc.FlowTest do
  use ExUnit.Case, async: true

  alias Svc.{Client, Flow, Pending}

  @issuer "https://acme.id.example"

  test "the PKCE challenge is RFC 7636's example" do
    # RFC 7636 Appendix B.
    assert Flow.pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") ==
             "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
  end

  test "authorization requests carry PKCE, state and nonce" do
    client = %Client{
      client_id: "app_1",
      redirect_uri: "https://rp.example/cb",
      metadata: %{authorization_endpoint: @issuer <> "/oauth/authorize"}
    }

    {:ok, url, pending} =
      Client.authorization_request(client, "openid profile", organization: "acme", state: "mine")

    uri = URI.parse(url)
    assert "#{uri.scheme}://#{uri.host}#{uri.path}" == @issuer <> "/oauth/authorize"
    pairs = uri.query |> URI.query_decoder() |> Enum.to_list()
    q = Map.new(pairs)
    assert Enum.count(pairs, &(elem(&1, 0) == "state")) == 1
    assert q["state"] == pending.state and q["nonce"] == pending.nonce and pending.nonce != nil
    assert q["code_challenge"] == Flow.pkce_challenge(pending.code_verifier)
    assert q["code_challenge_method"] == "S256"
    assert q["organization"] == "acme" and q["scope"] == "openid profile"
    assert q["redirect_uri"] == "https://rp.example/cb" and q["response_type"] == "code"
    assert byte_size(pending.state) == 43 and byte_size(pending.code_verifier) == 43
    assert {:ok, _, %Pending{nonce: nil}} = Client.authorization_request(client, "read")

    assert {:error, %Svc.ClientError{}} =
             Client.authorization_request(%{client | redirect_uri: nil}, "read")
  end

  test "callbacks are checked before their code is taken" do
    pending = %Pending{state: "s-1"}
    iss = URI.encode_www_form(@issuer)

    assert Flow.code_from_callback(
             "https://rp.example/cb?code=c-1&state=s-1&iss=#{iss}#frag",
             pending,
             @issuer
           ) ==
             {:ok, "c-1"}

    for {callback, want} <- [
          {"code=c-1&state=s-2&iss=#{iss}", :state_mismatch},
          {"code=c-1&iss=#{iss}", :state_mismatch},
          {"code=c-1&state=s-1", :issuer_mismatch},
          {"code=c-1&state=s-1&iss=https%3A%2F%2Fevil.test", :issuer_mismatch},
          {"error=access_denied&state=s-1&iss=https%3A%2F%2Fevil.test", :issuer_mismatch},
          {"state=s-1&iss=#{iss}", :missing_code}
        ] do
      assert Flow.code_from_callback(callback, pending, @issuer) == {:error, want}, callback
    end

    assert {:error, %Svc.Error{endpoint: "authorization", code: "access_denied"}} =
             Flow.code_from_callback("error=access_denied&state=s-1&iss=#{iss}", pending, @issuer)

    assert {:error, %Svc.ClientError{}} =
             Flow.code_from_callback("code=a&code=b&state=s-1&iss=#{iss}", pending, @issuer)

    assert {:error, %Svc.ClientError{}} =
             Flow.code_from_callback("code=%zz&state=s-1&iss=#{iss}", pending, @issuer)

    # A pending request without a state matches nothing.
    assert Flow.code_from_callback("code=c&state=&iss=#{iss}", %Pending{state: ""}, @issuer) ==
             {:error, :state_mismatch}
  end

  test "ID token claim rules" do
    now = 1_800_000_000

    base = %{
      "iss" => @issuer,
      "aud" => "app_1",
      "sub" => "usr_1",
      "exp" => now + 300,
      "iat" => now,
      "nonce" => "n-1"
    }

    check = fn claims -> Flow.check_id_token_claims(claims, @issuer, "app_1", "n-1", now) end
    assert check.(base) == :ok

    for {name, patch} <- [
          issuer: %{"iss" => "https://evil.test"},
          audience: %{"aud" => "app_2"},
          two_audiences: %{"aud" => ["app_1", "app_2"]},
          azp: %{"aud" => ["app_1", "app_2"], "azp" => "app_2"},
          expired: %{"exp" => now - 60},
          future: %{"iat" => now + 61},
          no_sub: %{"sub" => ""},
          nonce: %{"nonce" => "n-2"},
          no_nonce: %{"nonce" => nil},
          no_exp: %{"exp" => "soon"}
        ] do
      assert {:error, %Svc.IDTokenError{}} = check.(Map.merge(base, patch)), "#{name} accepted"
    end

    assert check.(Map.merge(base, %{"aud" => ["app_1", "app_2"], "azp" => "app_1"})) == :ok
    # Within the 60 s leeway, and a float exp.
    assert check.(Map.merge(base, %{"exp" => now - 59, "iat" => now + 59})) == :ok
    assert check.(Map.put(base, "exp", now + 0.5)) == :ok
    # Refresh: no nonce to compare.
    assert Flow.check_id_token_claims(Map.delete(base, "nonce"), @issuer, "app_1", nil, now) ==
             :ok
  end
end
