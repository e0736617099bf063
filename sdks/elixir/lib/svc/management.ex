defmodule Svc.Management do
  @moduledoc """
  A client of one tenant's management API (`{issuer}/api/v1`). Every call carries a machine
  token from a `Svc.TokenSource`; the tenant is the issuer's, so calls are tenant-aware by
  construction (a tenant's management credentials only ever reach that tenant's API).

  Every refusal is a `%Svc.Error{endpoint: "api"}` with the problem's code (RFC 9457 body). A
  token refused as invalid (401, e.g. revoked) is dropped and the call tried once more with a
  new one.

      {:ok, client} = Svc.Client.discover(issuer, client_id: id, client_secret: secret)
      {:ok, tokens} = Svc.TokenSource.start_link(client, scope: "users:read users:write")
      api = Svc.Management.new(tokens)
      {:ok, user} = Svc.Management.create_user(api, "ada@example.com", "Ada")
  """

  alias Svc.{TokenSource}

  defstruct [:tokens, :client]

  @type t :: %__MODULE__{tokens: GenServer.server(), client: Svc.Client.t()}

  defmodule Application do
    @moduledoc "An application as listed (the fields most callers use; `Svc.Management.call/4` has all)."
    defstruct [:client_id, :name, grant_types: []]
    @type t :: %__MODULE__{client_id: String.t(), name: String.t(), grant_types: [String.t()]}
  end

  defmodule TenantUser do
    @moduledoc "A person of the tenant."
    defstruct [:id, :email, :status]
    @type t :: %__MODULE__{id: String.t(), email: String.t(), status: String.t()}
  end

  @doc "The management API of `tokens`' issuer."
  @spec new(GenServer.server()) :: t
  def new(tokens), do: %__MODULE__{tokens: tokens, client: TokenSource.client(tokens)}

  @doc "Every application of the tenant (all pages)."
  @spec applications(t) :: {:ok, [Application.t()]} | {:error, Svc.Client.error()}
  def applications(%__MODULE__{} = api), do: pages(api, nil, [])

  defp pages(api, after_cursor, acc) do
    path =
      "/applications?limit=200" <>
        if(after_cursor, do: "&after=" <> URI.encode_www_form(after_cursor), else: "")

    with {:ok, %{"items" => items} = page} when is_list(items) <- call(api, :get, path) do
      apps =
        for item <- items,
            do: %Application{
              client_id: item["client_id"],
              name: item["name"],
              grant_types: item["grant_types"] || []
            }

      acc = acc ++ apps

      case page["next_cursor"] do
        cursor when is_binary(cursor) -> pages(api, cursor, acc)
        _ -> {:ok, acc}
      end
    else
      {:ok, _} -> {:error, Svc.ClientError.exception("svc: not a page of applications")}
      error -> error
    end
  end

  @doc "Creates a person (pre-provisioned) with `email` and an optional `name`."
  @spec create_user(t, String.t(), String.t() | nil) ::
          {:ok, TenantUser.t()} | {:error, Svc.Client.error()}
  def create_user(%__MODULE__{} = api, email, name \\ nil) do
    body =
      if name in [nil, ""], do: %{"email" => email}, else: %{"email" => email, "name" => name}

    with {:ok, doc} <- call(api, :post, "/tenant-users", body), do: {:ok, user(doc)}
  end

  @doc "Reads a person."
  @spec user(t, String.t()) :: {:ok, TenantUser.t()} | {:error, Svc.Client.error()}
  def user(%__MODULE__{} = api, id) do
    with {:ok, doc} <-
           call(api, :get, "/tenant-users/" <> URI.encode(id, &URI.char_unreserved?/1)),
         do: {:ok, user(doc)}
  end

  defp user(%{} = doc), do: %TenantUser{id: doc["id"], email: doc["email"], status: doc["status"]}
  defp user(_), do: %TenantUser{}

  @doc """
  Runs any operation: `method` on `path` (relative to `/api/v1`) with an optional JSON `body`
  (a map or list). Returns the decoded JSON answer (`nil` for 204 or an empty body).
  """
  @spec call(t, :get | :post | :put | :patch | :delete, String.t(), term) ::
          {:ok, term} | {:error, Svc.Client.error()}
  def call(%__MODULE__{} = api, method, path, body \\ nil) do
    case send_call(api, method, path, body) do
      {:error, %Svc.Error{status: 401}} ->
        :ok = TokenSource.invalidate(api.tokens)
        send_call(api, method, path, body)

      other ->
        other
    end
  end

  defp send_call(api, method, path, body) do
    with {:ok, token} <- TokenSource.access_token(api.tokens) do
      base = String.trim_trailing(api.client.metadata.issuer, "/") <> "/api/v1"

      request = %{
        method: method,
        url: base <> path,
        headers:
          [{"authorization", "Bearer " <> token}, {"accept", "application/json"}] ++
            if(body != nil, do: [{"content-type", "application/json"}], else: []),
        body: if(body != nil, do: Svc.JSON.encode!(body))
      }

      with {:ok, resp} <- api.client.http.(request, []) do
        cond do
          resp.status not in 200..299 -> {:error, Svc.Error.from_response("api", resp)}
          resp.status == 204 or resp.body == "" -> {:ok, nil}
          true -> decode(resp.body)
        end
      end
    end
  end

  defp decode(body) do
    case Svc.JSON.decode(body) do
      {:ok, doc} -> {:ok, doc}
      {:error, _} -> {:error, Svc.ClientError.exception("svc: the API's answer is not JSON")}
    end
  end
end
