defmodule Svc do
  @moduledoc """
  The Elixir backend SDK of svc, with Erlang/OTP only (`:httpc`, `:crypto`, `:public_key`).

  The client side signs people in and calls svc:

    * `Svc.Client` — discovery (the document must name the issuer), the authorization code
      flow with PKCE S256, state and nonce, the callback's RFC 9207 `iss` check, code
      redemption and ID token validation (OpenID Connect Core 1.0 §3.1.3.7), refresh, client
      credentials, UserInfo and the RP-initiated logout URL;
    * `Svc.TokenSource` — a cached machine token, renewed 30 s before it expires;
    * `Svc.Management` — the tenant's management API (`/api/v1`).

  The resource-server side validates svc access tokens by the spec's validation contract
  (`Svc.Validator`, `Svc.Plug`) and verifies webhook deliveries (`Svc.Webhook`).

  Errors never contain a token, code, secret or claim value. `Svc.JSON` is the SDK's own JSON
  codec (OTP 25 has none).
  """

  @doc "The SDK's version."
  def version, do: unquote(Mix.Project.config()[:version])
end
