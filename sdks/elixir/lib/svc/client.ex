defmodule Svc.Client do
  @moduledoc """
  An OAuth 2.0 / OpenID Connect client of one svc issuer (a tenant): discovery, the
  authorization code flow with PKCE S256, state and nonce, the callback with its RFC 9207 `iss`
  check, code redemption and ID token validation, refresh, client credentials, UserInfo and the
  RP-initiated logout URL.

  A client is a struct (safe to share between processes) holding the issuer's endpoints and a
  `Svc.KeySet` process that caches its keys; `discover/2` starts that process linked to the
  caller.

  Every function returns `{:ok, value}` or `{:error, reason}` where `reason` is one of
  `:state_mismatch`, `:issuer_mismatch`, `:missing_code`, `:subject_mismatch`, or an exception
  struct: `Svc.Error` (svc refused), `Svc.IDTokenError`, `Svc.ClientError`. Errors never contain
  a token, code, secret or claim value.
  """

  alias Svc.{ClientError, Flow, HTTP, JWT, KeySet, Pending, TokenSet}

  defstruct [
    :client_id,
    :client_secret,
    :redirect_uri,
    :id_token_alg,
    :http,
    :metadata,
    :keys,
    :dpop
  ]

  @type metadata :: %{
          issuer: String.t(),
          authorization_endpoint: String.t(),
          token_endpoint: String.t(),
          jwks_uri: String.t(),
          userinfo_endpoint: String.t() | nil,
          end_session_endpoint: String.t() | nil
        }

  @type t :: %__MODULE__{
          client_id: String.t(),
          client_secret: String.t() | nil,
          redirect_uri: String.t() | nil,
          id_token_alg: String.t(),
          http: (HTTP.request(), keyword -> term),
          metadata: metadata,
          keys: pid,
          dpop: Svc.DPoP.key() | nil
        }

  @type error ::
          :state_mismatch
          | :issuer_mismatch
          | :missing_code
          | :subject_mismatch
          | Svc.Error.t()
          | Svc.IDTokenError.t()
          | ClientError.t()

  @reserved ~w(response_type client_id redirect_uri scope state nonce code_challenge code_challenge_method)

  @doc """
  Reads `issuer`'s discovery document and returns a client for it. The document must name
  exactly `issuer` (Discovery 1.0 §4.3).

  Options:

    * `:client_id` (required);
    * `:client_secret` — authenticates with `client_secret_basic`; omit for a public client;
    * `:redirect_uri` — the registered redirect URI of the code flow;
    * `:id_token_alg` — the application's `id_token_signed_response_alg`: `"RS256"` (default),
      `"ES256"` or `"EdDSA"`; ID tokens signed otherwise are refused;
    * `:http` — a transport function (see `Svc.HTTP`);
    * `:dpop` — a `Svc.DPoP` key: tokens come back bound to it (RFC 9449) and UserInfo is
      called with proofs.
  """
  @spec discover(String.t(), keyword) :: {:ok, t} | {:error, ClientError.t()}
  def discover(issuer, opts) do
    http = Keyword.get(opts, :http, &HTTP.request/2)
    uri = URI.parse(issuer)

    with true <-
           (uri.scheme in ["http", "https"] and uri.host not in [nil, ""]) ||
             {:error, ClientError.exception("svc: the issuer is not an absolute http(s) URL")},
         {:ok, doc} <- discovery(issuer, http),
         {:ok, metadata} <- metadata(doc, issuer),
         {:ok, keys} <- KeySet.start_link(metadata.jwks_uri, http: http) do
      {:ok,
       %__MODULE__{
         client_id: Keyword.fetch!(opts, :client_id),
         client_secret: non_empty(opts[:client_secret]),
         redirect_uri: non_empty(opts[:redirect_uri]),
         id_token_alg: opts[:id_token_alg] || "RS256",
         http: http,
         metadata: metadata,
         keys: keys,
         dpop: opts[:dpop]
       }}
    end
  end

  @doc false
  def discovery(issuer, http) do
    case HTTP.get_json(
           String.trim_trailing(issuer, "/") <> "/.well-known/openid-configuration",
           http
         ) do
      {:ok, %{} = doc} -> {:ok, doc}
      {:ok, _} -> {:error, ClientError.exception("svc: discovery failed: not a JSON object")}
      {:error, e} -> {:error, ClientError.exception("svc: discovery failed: " <> e.message)}
    end
  end

  defp metadata(doc, issuer) do
    text = fn name -> if is_binary(doc[name]) and doc[name] != "", do: doc[name] end

    cond do
      doc["issuer"] != issuer ->
        {:error,
         ClientError.exception("svc: discovery failed: the document names another issuer")}

      !text.("authorization_endpoint") or !text.("token_endpoint") or !text.("jwks_uri") ->
        {:error, ClientError.exception("svc: discovery failed: endpoints are missing")}

      true ->
        {:ok,
         %{
           issuer: issuer,
           authorization_endpoint: text.("authorization_endpoint"),
           token_endpoint: text.("token_endpoint"),
           jwks_uri: text.("jwks_uri"),
           userinfo_endpoint: text.("userinfo_endpoint"),
           end_session_endpoint: text.("end_session_endpoint")
         }}
    end
  end

  defp non_empty(""), do: nil
  defp non_empty(value), do: value

  @doc """
  The URL to send the browser to for `scope` (space-separated), and the `Svc.Pending` to keep
  until the callback. `extra` (a map or keyword list) adds parameters such as `organization`,
  `prompt` or `resource`, but cannot replace the ones this function sets.
  """
  @spec authorization_request(t, String.t(), Enumerable.t()) ::
          {:ok, String.t(), Pending.t()} | {:error, ClientError.t()}
  def authorization_request(%__MODULE__{} = client, scope, extra \\ []) do
    if client.redirect_uri == nil do
      {:error, ClientError.exception("svc: a redirect_uri is required")}
    else
      openid = "openid" in String.split(scope)

      pending = %Pending{
        state: Flow.random_token(),
        code_verifier: Flow.random_token(),
        nonce: if(openid, do: Flow.random_token()),
        redirect_uri: client.redirect_uri
      }

      own =
        [
          {"response_type", "code"},
          {"client_id", client.client_id},
          {"redirect_uri", client.redirect_uri},
          {"scope", scope},
          {"state", pending.state},
          {"code_challenge", Flow.pkce_challenge(pending.code_verifier)},
          {"code_challenge_method", "S256"}
        ] ++ if(openid, do: [{"nonce", pending.nonce}], else: [])

      kept = for {k, v} <- extra, to_string(k) not in @reserved, do: {to_string(k), v}
      endpoint = client.metadata.authorization_endpoint
      sep = if String.contains?(endpoint, "?"), do: "&", else: "?"
      {:ok, endpoint <> sep <> URI.encode_query(kept ++ own), pending}
    end
  end

  @doc """
  Checks `callback` (the URL the browser came back to, or its query) against `pending`
  (`Svc.Flow.code_from_callback/3`), redeems the code with the PKCE verifier and validates the
  ID token with the pending nonce. An OpenID Connect sign-in without an ID token is refused.
  """
  @spec handle_callback(t, Pending.t(), String.t(), keyword) ::
          {:ok, TokenSet.t()} | {:error, error}
  def handle_callback(%__MODULE__{} = client, %Pending{} = pending, callback, opts \\ []) do
    now = Keyword.get(opts, :now, System.os_time(:second))

    with {:ok, code} <- Flow.code_from_callback(callback, pending, client.metadata.issuer),
         {:ok, tokens} <-
           token(client, [
             {"grant_type", "authorization_code"},
             {"code", code},
             {"redirect_uri", pending.redirect_uri},
             {"code_verifier", pending.code_verifier}
           ]) do
      cond do
        tokens.id_token != nil ->
          with {:ok, claims} <-
                 validate_id_token(client, tokens.id_token, pending.nonce, now: now) do
            {:ok, %{tokens | id_token_claims: claims}}
          end

        pending.nonce != nil ->
          {:error,
           ClientError.exception("svc: an OpenID Connect sign-in came back without an ID token")}

        true ->
          {:ok, tokens}
      end
    end
  end

  @doc """
  Redeems `refresh_token` (svc rotates it: keep the new one), optionally narrowing `scope`. A
  new ID token is validated without a nonce (Core §12.2).
  """
  @spec refresh(t, String.t(), String.t() | nil) :: {:ok, TokenSet.t()} | {:error, error}
  def refresh(%__MODULE__{} = client, refresh_token, scope \\ nil) do
    form =
      [{"grant_type", "refresh_token"}, {"refresh_token", refresh_token}] ++
        if(scope not in [nil, ""], do: [{"scope", scope}], else: [])

    with {:ok, tokens} <- token(client, form) do
      if tokens.id_token == nil do
        {:ok, tokens}
      else
        with {:ok, claims} <- validate_id_token(client, tokens.id_token, nil) do
          {:ok, %{tokens | id_token_claims: claims}}
        end
      end
    end
  end

  @doc """
  A machine token (client credentials grant) for `scope` (`nil` for all the client may have)
  and, optionally, the API `resource` (RFC 8707). For a cached token use `Svc.TokenSource`.
  """
  @spec client_credentials(t, String.t() | nil, String.t() | nil) ::
          {:ok, TokenSet.t()} | {:error, error}
  def client_credentials(%__MODULE__{} = client, scope \\ nil, resource \\ nil) do
    form =
      [{"grant_type", "client_credentials"}] ++
        if(scope not in [nil, ""], do: [{"scope", scope}], else: []) ++
        if(resource not in [nil, ""], do: [{"resource", resource}], else: [])

    token(client, form)
  end

  @doc """
  The person's claims from UserInfo, refused (`:subject_mismatch`) when they describe another
  subject than `expected_sub` (the ID token's, Core §5.3.4).
  """
  @spec userinfo(t, String.t(), String.t()) :: {:ok, map} | {:error, error}
  def userinfo(%__MODULE__{metadata: %{userinfo_endpoint: nil}}, _, _),
    do: {:error, ClientError.exception("svc: the issuer offers no UserInfo")}

  def userinfo(%__MODULE__{} = client, access_token, expected_sub) do
    send = fn nonce ->
      request = %{
        method: :get,
        url: client.metadata.userinfo_endpoint,
        headers:
          authorization(client, "GET", client.metadata.userinfo_endpoint, access_token, nonce) ++
            [{"accept", "application/json"}],
        body: nil
      }

      client.http.(request, [])
    end

    with {:ok, resp} <- with_nonce_retry(client, send) do
      case resp do
        %{status: 200, body: body} ->
          case Svc.JSON.decode(body) do
            {:ok, %{"sub" => ^expected_sub} = claims} when is_binary(expected_sub) ->
              {:ok, claims}

            {:ok, %{}} ->
              {:error, :subject_mismatch}

            _ ->
              {:error, ClientError.exception("svc: UserInfo is not a JSON object")}
          end

        _ ->
          {:error, Svc.Error.from_response("userinfo", resp)}
      end
    end
  end

  @doc """
  The RP-initiated logout URL (RP-Initiated Logout 1.0 §2); `post_logout_redirect_uri` and
  `state` may be `nil`.
  """
  @spec end_session_url(t, String.t(), String.t() | nil, String.t() | nil) ::
          {:ok, String.t()} | {:error, ClientError.t()}
  def end_session_url(client, id_token_hint, post_logout_redirect_uri \\ nil, state \\ nil)

  def end_session_url(%__MODULE__{metadata: %{end_session_endpoint: nil}}, _, _, _),
    do: {:error, ClientError.exception("svc: the issuer offers no end_session_endpoint")}

  def end_session_url(%__MODULE__{} = client, id_token_hint, post_logout, state) do
    query =
      [{"id_token_hint", id_token_hint}, {"client_id", client.client_id}] ++
        if(post_logout not in [nil, ""], do: [{"post_logout_redirect_uri", post_logout}], else: []) ++
        if(state not in [nil, ""], do: [{"state", state}], else: [])

    {:ok, client.metadata.end_session_endpoint <> "?" <> URI.encode_query(query)}
  end

  @doc """
  Validates an ID token issued to this client (Core §3.1.3.7): `alg` is the configured one,
  `typ` is not `at+jwt`, no `crit`, the signature verifies with the issuer's key for `kid`,
  then `Svc.Flow.check_id_token_claims/5`. `nonce` `nil` skips the nonce comparison (refresh).
  Option `:now` (Unix seconds) is for tests.
  """
  @spec validate_id_token(t, String.t(), String.t() | nil, keyword) ::
          {:ok, map} | {:error, Svc.IDTokenError.t()}
  def validate_id_token(%__MODULE__{} = client, token, nonce, opts \\ []) do
    now = Keyword.get(opts, :now, System.os_time(:second))
    alg = client.id_token_alg

    with {:ok, {header, parts}} <- JWT.split(token),
         :ok <- if(header["alg"] == alg, do: :ok, else: {:error, :algorithm}),
         :ok <- not_an_access_token(header),
         {:ok, key} <- KeySet.key(client.keys, kid(header), alg),
         {:ok, claims} <- JWT.verify(parts, alg, key),
         :ok <-
           Flow.check_id_token_claims(
             claims,
             client.metadata.issuer,
             client.client_id,
             nonce,
             now
           ) do
      {:ok, claims}
    else
      {:error, %Svc.IDTokenError{}} = error -> error
      {:error, %ClientError{message: m}} -> {:error, %Svc.IDTokenError{reason: m}}
      {:error, reason} -> {:error, %Svc.IDTokenError{reason: JWT.reason(reason)}}
    end
  end

  # A kid that is not a string names no key (and must not crash the caller).
  defp kid(%{"kid" => kid}) when is_binary(kid), do: kid
  defp kid(_), do: ""

  defp not_an_access_token(header) do
    typ = if is_binary(header["typ"]), do: String.downcase(header["typ"]), else: ""

    if typ in ["at+jwt", "application/at+jwt"] or Map.has_key?(header, "crit"),
      do: {:error, "not an ID token"},
      else: :ok
  end

  @doc false
  # POSTs `form` to the token endpoint with this client's authentication.
  def token(%__MODULE__{} = client, form) do
    {form, auth} =
      if client.client_secret do
        # RFC 6749 §2.3.1: id and secret are form-encoded before the Basic encoding.
        basic =
          Base.encode64(
            URI.encode_www_form(client.client_id) <>
              ":" <> URI.encode_www_form(client.client_secret)
          )

        {form, [{"authorization", "Basic " <> basic}]}
      else
        {form ++ [{"client_id", client.client_id}], []}
      end

    send = fn nonce ->
      proof =
        if client.dpop,
          do: [
            {"dpop",
             Svc.DPoP.proof(client.dpop, "POST", client.metadata.token_endpoint, nonce: nonce)}
          ],
          else: []

      request = %{
        method: :post,
        url: client.metadata.token_endpoint,
        headers:
          [{"content-type", "application/x-www-form-urlencoded"}, {"accept", "application/json"}] ++
            auth ++ proof,
        body: URI.encode_query(form)
      }

      client.http.(request, [])
    end

    with {:ok, resp} <- with_nonce_retry(client, send) do
      with 200 <- resp.status,
           {:ok, doc} <- Svc.JSON.decode(resp.body),
           {:ok, tokens} <- TokenSet.from_json(doc) do
        {:ok, tokens}
      else
        status when is_integer(status) ->
          {:error, Svc.Error.from_response("token", resp)}

        _ ->
          {:error, ClientError.exception("svc: not a token response (RFC 6749 §5.1)")}
      end
    end
  end

  # The Authorization header for `access_token` at `url`: "DPoP" with a proof naming it when the
  # client has a key (its tokens are bound), else "Bearer".
  defp authorization(%__MODULE__{dpop: nil}, _method, _url, access_token, _nonce),
    do: [{"authorization", "Bearer " <> access_token}]

  defp authorization(%__MODULE__{dpop: key}, method, url, access_token, nonce) do
    [
      {"authorization", "DPoP " <> access_token},
      {"dpop", Svc.DPoP.proof(key, method, url, access_token: access_token, nonce: nonce)}
    ]
  end

  # Sends once, and once more with the server's nonce when a DPoP client is refused with one
  # (RFC 9449 §8, §9): `send` takes the nonce (nil the first time).
  defp with_nonce_retry(client, send) do
    with {:ok, resp} <- send.(nil) do
      nonce = HTTP.header(resp, "dpop-nonce")

      if client.dpop && resp.status in [400, 401] && nonce do
        send.(nonce)
      else
        {:ok, resp}
      end
    end
  end
end
