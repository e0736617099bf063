# Plug is not available here (it is a Hex package), so this stand-in has the fields and the
# five functions of Plug.Conn that Svc.Plug.PlugConn calls, with Plug's signatures and
# semantics (lower-case header names, send_resp sets the state, halt marks the conn): it checks
# the adapter's calls, not Plug itself. It is defined only when the real one is absent.
unless Code.ensure_loaded?(Plug.Conn) do
  defmodule Plug.Conn do
    @moduledoc false
    defstruct req_headers: [],
              resp_headers: [],
              status: nil,
              resp_body: nil,
              halted: false,
              assigns: %{},
              state: :unset

    def get_req_header(%__MODULE__{req_headers: h}, key), do: for({^key, v} <- h, do: v)

    def put_resp_header(%__MODULE__{} = c, key, value),
      do: %{c | resp_headers: List.keystore(c.resp_headers, key, 0, {key, value})}

    def send_resp(%__MODULE__{state: :unset} = c, status, body),
      do: %{c | status: status, resp_body: body, state: :sent}

    def halt(%__MODULE__{} = c), do: %{c | halted: true}
    def assign(%__MODULE__{} = c, key, value), do: %{c | assigns: Map.put(c.assigns, key, value)}
  end
end

defmodule Svc.PlugConnTest do
  use ExUnit.Case, async: true

  test "the default adapter drives a Plug.Conn" do
    # A validator whose issuer is unreachable: a token-less request is refused before any fetch,
    # a token-carrying one answers 503.
    {:ok, validator} =
      Svc.Validator.start_link("http://127.0.0.1:9",
        http: fn _, _ -> {:error, Svc.ClientError.exception("down")} end
      )

    opts =
      Svc.Plug.init(validator: validator, audience: "https://api.example", tenant_id: "ten_1")

    assert opts.adapter == Svc.Plug.PlugConn

    conn = Svc.Plug.call(%Plug.Conn{}, opts)
    assert conn.halted and conn.state == :sent and conn.status == 401

    assert Plug.Conn.get_req_header(
             %Plug.Conn{req_headers: conn.resp_headers},
             "www-authenticate"
           ) == ["Bearer"]

    token = "eyJhbGciOiJFUzI1NiIsImtpZCI6ImVjIiwidHlwIjoiYXQrand0In0.e30.sig"
    conn = Svc.Plug.call(%Plug.Conn{req_headers: [{"authorization", "Bearer " <> token}]}, opts)
    assert conn.halted and conn.status == 503
    assert %{"error" => "temporarily_unavailable"} = Svc.JSON.decode!(conn.resp_body)
  end
end
