defmodule Svc.ClientTest do
  use ExUnit.Case, async: true

  alias Svc.{Client, Management, TokenSource}

  @issuer "https://acme.id.example"

  # A transport standing in for svc's endpoints in unit tests (the live test uses the real
  # service): discovery, a token endpoint issuing numbered tokens with `expires_in`, and an API
  # that refuses `token-1` as revoked.
  defp transport(expires_in) do
    counter = :counters.new(1, [])
    test = self()

    http = fn req, _ ->
      json = fn status, doc ->
        {:ok, %{status: status, headers: [], body: Svc.JSON.encode!(doc)}}
      end

      case req.url do
        @issuer <> "/.well-known/openid-configuration" ->
          json.(200, %{
            "issuer" => @issuer,
            "authorization_endpoint" => @issuer <> "/oauth/authorize",
            "token_endpoint" => @issuer <> "/oauth/token",
            "jwks_uri" => @issuer <> "/jwks",
            "end_session_endpoint" => @issuer <> "/oauth/logout"
          })

        @issuer <> "/oauth/token" ->
          send(test, {:token_request, req})
          :counters.add(counter, 1, 1)

          json.(200, %{
            "access_token" => "token-#{:counters.get(counter, 1)}",
            "token_type" => "Bearer",
            "expires_in" => expires_in
          })

        @issuer <> "/api/v1" <> path ->
          send(test, {:api, req.method, path})

          case List.keyfind(req.headers, "authorization", 0) do
            {_, "Bearer token-1"} -> json.(401, %{"error" => "invalid_token"})
            _ -> json.(200, %{"id" => "usr_1", "email" => "a@example.com", "status" => "active"})
          end
      end
    end

    http
  end

  defp client(expires_in \\ 3600) do
    {:ok, client} =
      Client.discover(@issuer,
        client_id: "app 1",
        client_secret: "s:e&c",
        http: transport(expires_in)
      )

    client
  end

  test "discovery needs an absolute URL and the same issuer" do
    assert {:error, %Svc.ClientError{}} = Client.discover("acme.id.example", client_id: "x")
    http = transport(60)

    assert {:error, %Svc.ClientError{message: m}} =
             Client.discover(@issuer <> "/", client_id: "x", http: http)

    assert m =~ "discovery failed"
    assert client().metadata.userinfo_endpoint == nil
  end

  test "client_secret_basic form-encodes id and secret; a public client sends its id" do
    {:ok, _} = Client.client_credentials(client(), "a b", "https://api.example")
    assert_received {:token_request, req}
    assert {"authorization", "Basic " <> basic} = List.keyfind(req.headers, "authorization", 0)
    assert Base.decode64!(basic) == "app+1:s%3Ae%26c"

    assert URI.decode_query(req.body) == %{
             "grant_type" => "client_credentials",
             "scope" => "a b",
             "resource" => "https://api.example"
           }

    {:ok, _} = Client.refresh(%{client() | client_secret: nil}, "rt-1")
    assert_received {:token_request, req}
    refute List.keyfind(req.headers, "authorization", 0)
    assert %{"client_id" => "app 1", "refresh_token" => "rt-1"} = URI.decode_query(req.body)
  end

  test "the token source caches, and renews 30 s before expiry" do
    {:ok, cached} = TokenSource.start_link(client(3600))
    assert {:ok, "token-1"} = TokenSource.access_token(cached)
    assert {:ok, "token-1"} = TokenSource.access_token(cached)
    :ok = TokenSource.invalidate(cached)
    assert {:ok, "token-2"} = TokenSource.access_token(cached)

    # A token with 30 s left is already due for renewal.
    {:ok, short} = TokenSource.start_link(client(30))
    assert {:ok, "token-1"} = TokenSource.access_token(short)
    assert {:ok, "token-2"} = TokenSource.access_token(short)
  end

  test "the management API retries once with a new token after a 401" do
    {:ok, tokens} = TokenSource.start_link(client())
    api = Management.new(tokens)

    assert {:ok, %Management.TenantUser{id: "usr_1", status: "active"}} =
             Management.user(api, "usr_1/x")

    assert_received {:api, :get, "/tenant-users/usr_1%2Fx"}
    assert_received {:api, :get, "/tenant-users/usr_1%2Fx"}
    assert {:ok, "token-2"} = TokenSource.access_token(tokens)
  end

  test "the logout URL" do
    assert {:ok, url} = Client.end_session_url(client(), "idt", "https://app.example/bye", "s 1")

    assert url ==
             @issuer <>
               "/oauth/logout?id_token_hint=idt&client_id=app+1&post_logout_redirect_uri=https%3A%2F%2Fapp.example%2Fbye&state=s+1"

    assert {:error, %Svc.ClientError{}} = Client.userinfo(client(), "at", "usr_1")
  end

  test "validators and token sources run under a supervisor" do
    children = [
      {Svc.Validator, {@issuer, name: :svc_test_validator}},
      {TokenSource, {client(), name: :svc_test_tokens}}
    ]

    {:ok, sup} = Supervisor.start_link(children, strategy: :one_for_one)
    assert {:ok, "token-1"} = TokenSource.access_token(:svc_test_tokens)
    assert Process.whereis(:svc_test_validator)
    Supervisor.stop(sup)
  end
end
