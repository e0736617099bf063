defmodule Svc.LiveTest do
  @moduledoc """
  The SDK against a running svc (single-tenant, plain-http loopback issuer). The runtime's
  elixir_sdk test starts the service, provisions the tenant's management credentials and runs
  this with SVC_E2E_* set; without them it is excluded (test_helper.exs), never faked.
  """
  use ExUnit.Case, async: false

  alias Svc.{Client, Management, TokenSource, TokenSet, Validator}
  alias Svc.Test.{Browser, TinyServer}

  @moduletag :live
  @moduletag timeout: 180_000

  @redirect "http://127.0.0.1:65500/callback"
  @bye "http://127.0.0.1:65500/bye"
  @password "Analytical-Engine-1843!"

  # Follows the browser from auth_url through the hosted sign-in to the redirect URI.
  defp sign_in(browser, issuer, auth_url, email) do
    Enum.reduce_while(1..8, auth_url, fn _, next ->
      resp = Browser.get(browser, next)

      assert resp.status == 303,
             "#{next} answered #{resp.status}: #{String.slice(resp.body, 0, 300)}"

      location = absolute(issuer, Svc.HTTP.header(resp, "location"))

      cond do
        String.starts_with?(location, @redirect) ->
          {:halt, location}

        String.contains?(location, "/auth/sign-in?") ->
          form =
            hidden_fields(browser, location)
            |> Map.merge(%{"email" => email, "password" => @password})

          resp = Browser.post_form(browser, issuer <> "/auth/sign-in", form)
          {:cont, absolute(issuer, Svc.HTTP.header(resp, "location"))}

        true ->
          {:cont, location}
      end
    end)
    |> tap(
      &assert(
        String.starts_with?(&1, @redirect),
        "the sign-in did not come back to the application"
      )
    )
  end

  defp absolute(issuer, "/" <> _ = path), do: issuer <> path
  defp absolute(_, location), do: location || ""

  defp hidden_fields(browser, page) do
    body = Browser.get(browser, page).body
    body = body |> String.split("</form>", parts: 2) |> hd()

    for [_, name, value] <-
          Regex.scan(~r/<input type="hidden" name="([^"]+)" value="([^"]*)"/, body),
        into: %{},
        do: {unescape(name), unescape(value)}
  end

  defp unescape(text) do
    Regex.replace(~r/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/, text, fn _, entity ->
      case entity do
        "amp" -> "&"
        "lt" -> "<"
        "gt" -> ">"
        "quot" -> "\""
        "apos" -> "'"
        "#x" <> hex -> <<String.to_integer(hex, 16)::utf8>>
        "#" <> dec -> <<String.to_integer(dec)::utf8>>
      end
    end)
  end

  defp protected_call(url, token) do
    headers = if token, do: [{"authorization", "Bearer " <> token}], else: []
    {:ok, resp} = Svc.HTTP.request(%{method: :get, url: url, headers: headers, body: nil})
    {resp.status, resp.body <> (Svc.HTTP.header(resp, "www-authenticate") || "")}
  end

  test "the SDK against the service" do
    issuer = System.fetch_env!("SVC_E2E_ISSUER")
    tenant_id = System.fetch_env!("SVC_E2E_TENANT_ID")
    # Unique addresses, so the test can run again against the same service.
    run = Base.encode16(:crypto.strong_rand_bytes(4), case: :lower)
    ada = "ada.#{run}@example.com"

    # Discovery refuses a document naming another issuer.
    assert {:error, %Svc.ClientError{}} = Client.discover(issuer <> "/", client_id: "x")

    # The management API through a cached machine token.
    {:ok, machine} =
      Client.discover(issuer,
        client_id: System.fetch_env!("SVC_E2E_MANAGEMENT_ID"),
        client_secret: System.fetch_env!("SVC_E2E_MANAGEMENT_SECRET")
      )

    {:ok, tokens} =
      TokenSource.start_link(machine,
        scope: "applications:read applications:write users:read users:write"
      )

    {:ok, first} = TokenSource.access_token(tokens)
    assert {:ok, ^first} = TokenSource.access_token(tokens), "the machine token was not cached"
    api = Management.new(tokens)

    {:ok, app} =
      Management.call(api, :post, "/applications", %{
        "name" => "Elixir RP",
        "first_party" => true,
        "redirect_uris" => [@redirect],
        "post_logout_redirect_uris" => [@bye],
        "grant_types" => ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method" => "client_secret_basic",
        "allowed_scopes" => ["openid", "profile", "email", "offline_access"]
      })

    {:ok, person} =
      Management.call(api, :post, "/tenant-users", %{
        "email" => ada,
        "password" => @password,
        "name" => "Ada Lovelace"
      })

    assert {:ok, %Management.TenantUser{email: ^ada}} = Management.user(api, person["id"])

    assert {:ok, %Management.TenantUser{status: status}} =
             Management.create_user(api, "babbage.#{run}@example.com", "Charles")

    assert is_binary(status) and status != ""
    {:ok, apps} = Management.applications(api)
    assert Enum.any?(apps, &(&1.client_id == app["client_id"] and &1.name == "Elixir RP"))

    assert {:error, %Svc.Error{status: 403, code: "insufficient_scope"}} =
             Management.call(api, :get, "/webhooks")

    # The code flow, with hostile callbacks refused before the code is used.
    {:ok, rp} =
      Client.discover(issuer,
        client_id: app["client_id"],
        client_secret: app["client_secret"],
        redirect_uri: @redirect
      )

    {:ok, browser} = Browser.start()

    {:ok, auth_url, pending} =
      Client.authorization_request(rp, "openid profile email offline_access")

    callback = sign_in(browser, issuer, auth_url, ada)

    assert {:error, :state_mismatch} =
             Client.handle_callback(rp, %{pending | state: "not-the-state"}, callback)

    mixed =
      String.replace(
        callback,
        "iss=" <> URI.encode_www_form(issuer),
        "iss=" <> URI.encode_www_form("https://evil.example")
      )

    assert mixed != callback
    assert {:error, :issuer_mismatch} = Client.handle_callback(rp, pending, mixed)
    {:ok, signed} = Client.handle_callback(rp, pending, callback)
    assert TokenSet.subject(signed) == person["id"]
    assert signed.id_token_claims["nonce"] == pending.nonce

    # A second sign-in whose nonce is not the request's: the ID token is refused, and the code
    # it spent is refused by svc when presented again.
    {:ok, auth_url, pending} =
      Client.authorization_request(rp, "openid profile email offline_access")

    callback = sign_in(browser, issuer, auth_url, ada)

    assert {:error, %Svc.IDTokenError{reason: reason}} =
             Client.handle_callback(rp, %{pending | nonce: "another-nonce"}, callback)

    assert reason =~ "nonce"

    assert {:error, %Svc.Error{code: "invalid_grant"}} =
             Client.handle_callback(rp, pending, callback)

    # UserInfo for the ID token's subject only.
    assert {:ok, %{"email" => ^ada}} =
             Client.userinfo(rp, signed.access_token, TokenSet.subject(signed))

    assert {:error, :subject_mismatch} =
             Client.userinfo(rp, signed.access_token, "usr_someone_else")

    # The ID token is this client's, current and signed.
    {:ok, other} = Client.discover(issuer, client_id: "app_01jd0000000000000000000000")
    assert {:error, %Svc.IDTokenError{}} = Client.validate_id_token(other, signed.id_token, nil)

    assert {:error, %Svc.IDTokenError{reason: "expired"}} =
             Client.validate_id_token(rp, signed.id_token, nil,
               now: System.os_time(:second) + 7200
             )

    [_, payload, _] = String.split(signed.id_token, ".")
    unsigned = Svc.JWT.b64(~s({"alg":"none"})) <> "." <> payload <> "."
    assert {:error, %Svc.IDTokenError{}} = Client.validate_id_token(rp, unsigned, nil)

    # Refresh rotates; the old refresh token is refused afterwards.
    {:ok, refreshed} = Client.refresh(rp, signed.refresh_token)
    assert refreshed.access_token != signed.access_token
    assert refreshed.refresh_token not in [nil, signed.refresh_token]
    assert {:error, %Svc.Error{code: "invalid_grant"}} = Client.refresh(rp, signed.refresh_token)

    # Client credentials directly, uncached.
    assert {:ok, %TokenSet{access_token: direct, expires_in: expires_in}} =
             Client.client_credentials(machine, "applications:read")

    assert is_binary(direct) and expires_in > 30

    # A resource server with the plug: the machine token for the management audience.
    {:ok, validator} = Validator.start_link(issuer)
    {:ok, machine_token} = TokenSource.access_token(tokens)
    audience = issuer <> "/api/v1"

    ok =
      TinyServer.start(
        validator: validator,
        audience: audience,
        tenant_id: tenant_id,
        scope: "applications:read"
      )

    assert {200, "system"} = protected_call(ok, machine_token)
    assert {401, _} = protected_call(ok, nil)
    assert {401, _} = protected_call(ok, refreshed.access_token)

    scoped =
      TinyServer.start(
        validator: validator,
        audience: audience,
        tenant_id: tenant_id,
        scope: "policies:write"
      )

    assert {403, body} = protected_call(scoped, machine_token)
    assert body =~ ~s(scope="policies:write")

    elsewhere =
      TinyServer.start(
        validator: validator,
        audience: audience,
        tenant_id: "ten_other",
        scope: "applications:read"
      )

    assert {403, _} = protected_call(elsewhere, machine_token)

    # RP-initiated logout returns to the registered address with the state.
    {:ok, logout} = Client.end_session_url(rp, signed.id_token, @bye, "bye-1")
    resp = Browser.get(browser, logout)
    location = Svc.HTTP.header(resp, "location") || ""

    assert resp.status == 303 and String.starts_with?(location, @bye) and
             location =~ "state=bye-1"

    IO.puts("\nsvc-elixir-live: passed")
  end
end
