defmodule Svc.Requirements do
  @moduledoc """
  What a route demands of an access token (see `Svc.Validator`).

    * `:audience` (required) and `:tenant_id` (required);
    * `:organization` — rule 6b, when the route names one;
    * `:scope` — rule 7, when the route needs one;
    * `:subject_types` — rule 8; `nil` means `human`, `agent` and `system`;
    * `:delegation` — rule 9: allow an `act` claim;
    * `:max_delegation_depth` — rule 9: the most actors a chain may name (default 3, the
      issuer's cap);
    * `:trusted_actors` — rule 9: the parties (their `sub`) trusted to act, compared with the
      outermost `act` (the current actor); empty trusts any;
    * `:leeway` — seconds of clock skew on `exp`/`nbf` (default 5).
  """
  defstruct audience: nil,
            tenant_id: nil,
            organization: nil,
            scope: nil,
            subject_types: nil,
            delegation: false,
            max_delegation_depth: 3,
            trusted_actors: [],
            leeway: 5

  @type t :: %__MODULE__{
          audience: String.t(),
          tenant_id: String.t(),
          organization: String.t() | nil,
          scope: String.t() | nil,
          subject_types: [String.t()] | nil,
          delegation: boolean,
          max_delegation_depth: pos_integer,
          trusted_actors: [String.t()],
          leeway: non_neg_integer
        }
end

defmodule Svc.Claims do
  @moduledoc "The claims of an access token that passed validation; `:all` has every claim."
  defstruct [:subject, :client_id, :tenant_id, :subject_type, :org, scopes: [], all: %{}]

  @type t :: %__MODULE__{
          subject: String.t(),
          client_id: String.t() | nil,
          tenant_id: String.t(),
          scopes: [String.t()],
          subject_type: String.t(),
          org: String.t() | nil,
          all: map
        }
end

defmodule Svc.ValidationError do
  @moduledoc """
  A refusal by the access-token validation contract, with how to answer it.

    * `:status` — 401, 403 (or 503 when the issuer's keys are unavailable);
    * `:code` — `"unauthorized"`, `"invalid_token"`, `"forbidden"`, `"insufficient_scope"` or
      `"temporarily_unavailable"`;
    * `:reason` — safe to show: never the token or a claim value;
    * `:scope` — the missing scope, for `insufficient_scope`.
  """
  defexception [:status, :code, :reason, :scope]

  @type t :: %__MODULE__{
          status: 401 | 403 | 503,
          code: String.t(),
          reason: String.t(),
          scope: String.t() | nil
        }

  @impl true
  def message(%{reason: reason}), do: "svc: " <> reason

  @doc "The RFC 6750 §3 `WWW-Authenticate` challenge for this refusal."
  @spec www_authenticate(t) :: String.t()
  def www_authenticate(%__MODULE__{code: "unauthorized"}), do: "Bearer"
  def www_authenticate(%__MODULE__{code: "forbidden"}), do: "Bearer"

  def www_authenticate(%__MODULE__{code: "insufficient_scope", scope: scope}),
    do: ~s(Bearer error="insufficient_scope", scope="#{scope}")

  def www_authenticate(%__MODULE__{reason: reason}),
    do: ~s(Bearer error="invalid_token", error_description="#{reason}")

  @doc false
  def invalid(reason), do: %__MODULE__{status: 401, code: "invalid_token", reason: reason}
  @doc false
  def forbidden(reason), do: %__MODULE__{status: 403, code: "forbidden", reason: reason}
end

defmodule Svc.Validator do
  @moduledoc """
  Validates svc access tokens for a protected API by the spec's validation contract: the same
  rules, in the same order, as the Rust and Go SDKs, each stopping at its first failure:

    1. the token comes from `Authorization: Bearer` (one token68, at most 16 KiB);
    2. the signature verifies with a key of the issuer's JWKS whose `kid` matches; `alg` is
       ES256 or EdDSA only; `typ` is `at+jwt` (RFC 9068 §4); no `crit`;
    3. `iss` is the issuer; 4. `aud` contains the API's audience; 5. `exp` (required) and `nbf`
       admit now;
    6. `tenant_id` is the owning tenant, before scopes; 6b. when the route names an
       organization, the token's (`org_id`, else `org`) equals it; 7. `scope` holds the
       required scope;
    8. `subject_type` is one the route accepts; 9. `act` only where delegation is allowed;
    10. a DPoP-bound token (`cnf`) is refused, since this SDK does not verify proofs.

  A validator is a process that discovers the issuer's JWKS URI once (the discovery document
  must name the issuer) and owns a `Svc.KeySet`; validation itself runs in the caller.
  """
  use GenServer

  alias Svc.{Claims, JWT, Requirements, ValidationError}

  @doc "Starts a validator for `issuer`. Options: `:http` (see `Svc.HTTP`), `:name`."
  @spec start_link(String.t(), keyword) :: GenServer.on_start()
  def start_link(issuer, opts \\ []) do
    {name, opts} = Keyword.pop(opts, :name)
    GenServer.start_link(__MODULE__, {issuer, opts}, if(name, do: [name: name], else: []))
  end

  @doc false
  def child_spec({issuer, opts}) do
    %{id: Keyword.get(opts, :name, __MODULE__), start: {__MODULE__, :start_link, [issuer, opts]}}
  end

  @doc """
  Runs the whole contract on an `Authorization` header value (`nil` when there is none).
  `requirements` is a `Svc.Requirements` or a keyword list of its fields.
  """
  @spec validate(GenServer.server(), String.t() | nil, Requirements.t() | keyword) ::
          {:ok, Claims.t()} | {:error, ValidationError.t()}
  def validate(validator, authorization, requirements) do
    req = requirements(requirements)

    with {:ok, token} <- bearer(authorization),
         {:ok, {header, parts}} <- header(token),
         {:ok, keys, issuer} <- key_set(validator),
         {:ok, key} <- key(keys, header),
         {:ok, all} <- signature(parts, header["alg"], key) do
      check_access_claims(all, issuer, req, System.os_time(:second))
    end
  end

  @doc false
  def requirements(%Requirements{} = req), do: req
  def requirements(opts) when is_list(opts), do: struct!(Requirements, opts)

  # Rule 1.
  defp bearer(authorization) when is_binary(authorization) do
    case String.split(authorization, " ", parts: 2) do
      [scheme, token] ->
        cond do
          String.downcase(scheme) != "bearer" ->
            {:error, unauthorized()}

          token == "" or byte_size(token) > JWT.max_token_bytes() or
              String.contains?(token, [" ", "\t"]) ->
            {:error,
             ValidationError.invalid(
               "the Authorization header does not carry exactly one access token"
             )}

          true ->
            {:ok, token}
        end

      _ ->
        {:error, unauthorized()}
    end
  end

  defp bearer(_), do: {:error, unauthorized()}

  defp unauthorized,
    do: %ValidationError{status: 401, code: "unauthorized", reason: "an access token is required"}

  # Rule 2, the header.
  defp header(token) do
    with {:ok, {header, _parts}} = split <- JWT.split(token) do
      typ = if is_binary(header["typ"]), do: String.downcase(header["typ"]), else: ""

      cond do
        header["alg"] not in ["ES256", "EdDSA"] ->
          {:error, ValidationError.invalid(JWT.reason(:algorithm))}

        typ not in ["at+jwt", "application/at+jwt"] ->
          {:error,
           ValidationError.invalid("the token is not a JWT access token (typ must be at+jwt)")}

        Map.has_key?(header, "crit") or not is_binary(header["kid"]) or header["kid"] == "" ->
          {:error, ValidationError.invalid(JWT.reason(:malformed))}

        true ->
          split
      end
    else
      {:error, reason} -> {:error, ValidationError.invalid(JWT.reason(reason))}
    end
  end

  defp key_set(validator) do
    case GenServer.call(validator, :key_set, 30_000) do
      {:ok, keys, issuer} ->
        {:ok, keys, issuer}

      {:error, _} ->
        {:error,
         %ValidationError{
           status: 503,
           code: "temporarily_unavailable",
           reason: "the issuer's keys are unavailable"
         }}
    end
  end

  defp key(keys, header) do
    case Svc.KeySet.key(keys, header["kid"], header["alg"]) do
      {:ok, key} ->
        {:ok, key}

      {:error, %Svc.ClientError{}} ->
        {:error, ValidationError.invalid("the issuer's keys are unavailable")}

      {:error, reason} ->
        {:error, ValidationError.invalid(JWT.reason(reason))}
    end
  end

  defp signature(parts, alg, key) do
    case JWT.verify(parts, alg, key) do
      {:ok, all} -> {:ok, all}
      {:error, reason} -> {:error, ValidationError.invalid(JWT.reason(reason))}
    end
  end

  @doc """
  Rules 3–10 on verified claims, at `now` (Unix seconds). Public so an application can test
  its requirements without tokens.
  """
  @spec check_access_claims(map, String.t(), Requirements.t() | keyword, integer) ::
          {:ok, Claims.t()} | {:error, ValidationError.t()}
  def check_access_claims(all, issuer, requirements, now) do
    req = requirements(requirements)
    text = fn name -> if is_binary(all[name]), do: all[name], else: "" end
    invalid = &{:error, ValidationError.invalid(&1)}
    forbidden = &{:error, ValidationError.forbidden(&1)}
    leeway = req.leeway || 5
    exp = all["exp"]
    nbf = all["nbf"]
    {org, two_orgs} = organization(text.("org_id"), text.("org"))
    scopes = String.split(text.("scope"))
    accepted = req.subject_types || ["human", "agent", "system"]

    cond do
      # Rule 3.
      text.("iss") != issuer ->
        invalid.("the access token was not issued by the expected issuer")

      # Rule 4.
      not audience?(all["aud"], req.audience) ->
        invalid.("the access token is not intended for this API")

      # Rule 5.
      not is_number(exp) or now >= trunc(exp) + leeway ->
        invalid.("the access token is expired")

      is_number(nbf) and now + leeway < trunc(nbf) ->
        invalid.("the access token is not valid yet")

      # Rule 6, before scopes.
      req.tenant_id in [nil, ""] or text.("tenant_id") != req.tenant_id ->
        forbidden.("the access token belongs to another tenant")

      # Rule 6b: org_id, else org; both present and different is refused.
      two_orgs ->
        invalid.("the access token names two organizations")

      req.organization not in [nil, ""] and org != req.organization ->
        forbidden.("the access token is for another organization")

      # Rule 7: scopes do not imply one another.
      req.scope not in [nil, ""] and req.scope not in scopes ->
        {:error,
         %ValidationError{
           status: 403,
           code: "insufficient_scope",
           reason: "the access token lacks the scope this operation requires",
           scope: req.scope
         }}

      # Rule 8.
      text.("subject_type") not in accepted ->
        forbidden.("this kind of caller may not use this operation")

      # Rule 9.
      Map.has_key?(all, "act") and not req.delegation ->
        forbidden.("delegated tokens are not accepted here")

      Map.has_key?(all, "act") and delegation_refusal(all["act"], req) != nil ->
        forbidden.(delegation_refusal(all["act"], req))

      # Rule 10: no DPoP proofs are verified here, so a bound token cannot be used.
      Map.has_key?(all, "cnf") ->
        invalid.("DPoP-bound tokens need a DPoP-verifying resource server")

      text.("sub") == "" ->
        invalid.("the access token has no subject")

      true ->
        {:ok,
         %Claims{
           subject: text.("sub"),
           client_id: all["client_id"],
           tenant_id: text.("tenant_id"),
           scopes: scopes,
           subject_type: text.("subject_type"),
           org: if(org == "", do: nil, else: org),
           all: all
         }}
    end
  end

  defp organization("", legacy), do: {legacy, false}
  defp organization(org, ""), do: {org, false}
  defp organization(org, legacy), do: {org, legacy != org}

  defp audience?(aud, audience) when is_binary(aud), do: aud == audience
  defp audience?(aud, audience) when is_list(aud), do: audience in aud
  defp audience?(_, _), do: false

  @impl true
  def init({issuer, opts}) do
    {:ok, %{issuer: issuer, http: Keyword.get(opts, :http, &Svc.HTTP.request/2), keys: nil}}
  end

  @impl true
  def handle_call(:key_set, _from, %{keys: nil} = state) do
    # Discovery §4.3: the document must name this issuer.
    with {:ok, doc} <- Svc.Client.discovery(state.issuer, state.http),
         true <- doc["issuer"] == state.issuer and is_binary(doc["jwks_uri"]),
         {:ok, keys} <- Svc.KeySet.start_link(doc["jwks_uri"], http: state.http) do
      {:reply, {:ok, keys, state.issuer}, %{state | keys: keys}}
    else
      _ -> {:reply, {:error, :unavailable}, state}
    end
  end

  def handle_call(:key_set, _from, state), do: {:reply, {:ok, state.keys, state.issuer}, state}

  # Rule 9 on a present `act` where delegation is allowed: why it is refused, or nil. Every
  # link is a map with a non-empty string `sub`, at most 8 deep; no more links than the route
  # accepts; the outermost actor one the route trusts when it names any.
  defp delegation_refusal(act, req) do
    case actor_chain(act, []) do
      :malformed ->
        "the delegation chain is malformed"

      chain ->
        cond do
          length(chain) > (req.max_delegation_depth || 3) ->
            "the delegation chain is longer than this operation accepts"

          (req.trusted_actors || []) != [] and hd(chain) not in req.trusted_actors ->
            "the party acting with this token is not trusted here"

          true ->
            nil
        end
    end
  end

  defp actor_chain(_link, acc) when length(acc) >= 8, do: :malformed

  defp actor_chain(%{"sub" => sub} = link, acc) when is_binary(sub) and sub != "" do
    case Map.fetch(link, "act") do
      :error -> Enum.reverse([sub | acc])
      {:ok, next} -> actor_chain(next, [sub | acc])
    end
  end

  defp actor_chain(_link, _acc), do: :malformed
end
