defmodule Svc.Plug do
  @moduledoc """
  A plug that protects routes with svc access tokens (`Svc.Validator`), without depending on
  the Plug package (this SDK downloads nothing from Hex).

  It has the Plug behaviour's shape, `init/1` and `call/2`, and reaches the connection only
  through an adapter module (`Svc.Plug.Adapter`):

    * `Svc.Plug.PlugConn` (the default) drives a `%Plug.Conn{}` through `Plug.Conn`'s public
      functions, so in a Phoenix or Plug application it is used like any plug:

          plug Svc.Plug,
            validator: MyApp.Validator,
            audience: "https://api.example",
            tenant_id: "ten_…",
            scope: "invoices:read"

    * `Svc.Plug.SimpleConn` is a plain struct and adapter for servers without Plug (`:gen_tcp`,
      `:httpd`, Cowboy handlers): build one from the request, call the plug, write its
      response.

  A refused request is answered with 401/403 (503 when the issuer's keys are unavailable), the
  RFC 6750 `WWW-Authenticate` challenge and a JSON body `{"error", "error_description"}`, and
  halted. A request with more than one `Authorization` header is refused. An accepted one
  carries its `%Svc.Claims{}` under the assign `:svc_claims`.

  Options: `:validator` (a `Svc.Validator` pid or name, required), `:adapter`, and the fields of
  `Svc.Requirements`.
  """

  alias Svc.ValidationError

  @doc "Checks the options once, at compile or start time."
  @spec init(keyword) :: map
  def init(opts) do
    {validator, opts} = Keyword.pop(opts, :validator)
    {adapter, opts} = Keyword.pop(opts, :adapter, Svc.Plug.PlugConn)
    unless validator, do: raise(ArgumentError, "Svc.Plug needs a :validator")
    %{validator: validator, adapter: adapter, requirements: Svc.Validator.requirements(opts)}
  end

  @doc "Validates the request's access token; answers and halts, or assigns `:svc_claims`."
  @spec call(term, map) :: term
  def call(conn, %{validator: validator, adapter: adapter, requirements: req}) do
    result =
      case adapter.get_req_header(conn, "authorization") do
        [header] -> Svc.Validator.validate(validator, header, req)
        [] -> Svc.Validator.validate(validator, nil, req)
        _ -> {:error, ValidationError.invalid("more than one Authorization header")}
      end

    case result do
      {:ok, claims} ->
        adapter.assign(conn, :svc_claims, claims)

      {:error, %ValidationError{} = e} ->
        body = Svc.JSON.encode!(%{"error" => e.code, "error_description" => e.reason})

        conn
        |> adapter.put_resp_header("www-authenticate", ValidationError.www_authenticate(e))
        |> adapter.put_resp_header("content-type", "application/json")
        |> adapter.send_resp_and_halt(e.status, body)
    end
  end
end

defmodule Svc.Plug.Adapter do
  @moduledoc "How `Svc.Plug` reads a request and answers it, for one kind of connection."

  @doc "Every value of request header `name` (lower-case)."
  @callback get_req_header(conn :: term, name :: String.t()) :: [String.t()]
  @doc "Adds a response header."
  @callback put_resp_header(conn :: term, name :: String.t(), value :: String.t()) :: term
  @doc "Sends the response and stops the pipeline."
  @callback send_resp_and_halt(conn :: term, status :: pos_integer, body :: binary) :: term
  @doc "Stores a value for the next handler."
  @callback assign(conn :: term, key :: atom, value :: term) :: term
end

defmodule Svc.Plug.PlugConn do
  @moduledoc """
  `Svc.Plug.Adapter` for `%Plug.Conn{}`, calling `Plug.Conn` at run time. The Plug package is
  the application's dependency, not this SDK's, so this module compiles without it.
  """
  @behaviour Svc.Plug.Adapter
  # Plug.Conn exists only in applications that have Plug; this SDK is compiled without it.
  @compile {:no_warn_undefined, Plug.Conn}

  @impl true
  def get_req_header(conn, name), do: Plug.Conn.get_req_header(conn, name)
  @impl true
  def put_resp_header(conn, name, value), do: Plug.Conn.put_resp_header(conn, name, value)
  @impl true
  def send_resp_and_halt(conn, status, body),
    do: conn |> Plug.Conn.send_resp(status, body) |> Plug.Conn.halt()

  @impl true
  def assign(conn, key, value), do: Plug.Conn.assign(conn, key, value)
end

defmodule Svc.Plug.SimpleConn do
  @moduledoc """
  A plain connection and its `Svc.Plug.Adapter`, for servers without Plug: fill `:req_headers`
  (lower-case names, one tuple per header line), call `Svc.Plug.call/2` with
  `adapter: Svc.Plug.SimpleConn`, then, when `:halted`, write `:status`, `:resp_headers` and
  `:resp_body`; otherwise run your handler with `assigns.svc_claims`.
  """
  @behaviour Svc.Plug.Adapter

  defstruct req_headers: [],
            status: nil,
            resp_headers: [],
            resp_body: nil,
            halted: false,
            assigns: %{}

  @type t :: %__MODULE__{
          req_headers: [{String.t(), String.t()}],
          status: pos_integer | nil,
          resp_headers: [{String.t(), String.t()}],
          resp_body: binary | nil,
          halted: boolean,
          assigns: map
        }

  @impl true
  def get_req_header(%__MODULE__{req_headers: headers}, name),
    do: for({k, v} <- headers, String.downcase(k) == name, do: v)

  @impl true
  def put_resp_header(%__MODULE__{} = conn, name, value),
    do: %{conn | resp_headers: List.keystore(conn.resp_headers, name, 0, {name, value})}

  @impl true
  def send_resp_and_halt(%__MODULE__{} = conn, status, body),
    do: %{conn | status: status, resp_body: body, halted: true}

  @impl true
  def assign(%__MODULE__{} = conn, key, value),
    do: %{conn | assigns: Map.put(conn.assigns, key, value)}
end
