defmodule Svc.Test.TinyServer do
  @moduledoc """
  A one-request-per-connection HTTP/1.1 server on loopback (`:gen_tcp`) that runs `Svc.Plug`
  with `Svc.Plug.SimpleConn` in front of a handler answering the caller's `subject_type`: the
  live test's protected API, like `httptest.NewServer` in the Go SDK's.
  """

  alias Svc.Plug.SimpleConn

  @doc "Starts the server; returns its base URL."
  def start(plug_opts) do
    {:ok, listen} =
      :gen_tcp.listen(0, [
        :binary,
        packet: :raw,
        active: false,
        reuseaddr: true,
        ip: {127, 0, 0, 1}
      ])

    {:ok, port} = :inet.port(listen)
    opts = Svc.Plug.init([adapter: SimpleConn] ++ plug_opts)
    spawn_link(fn -> accept(listen, opts) end)
    "http://127.0.0.1:#{port}/"
  end

  defp accept(listen, opts) do
    {:ok, socket} = :gen_tcp.accept(listen)
    serve(socket, opts)
    accept(listen, opts)
  end

  defp serve(socket, opts) do
    {:ok, head} = read_head(socket, "")
    [_request_line | lines] = String.split(head, "\r\n", trim: true)

    headers =
      for line <- lines,
          [k, v] = String.split(line, ":", parts: 2),
          do: {String.downcase(k), String.trim(v)}

    conn = Svc.Plug.call(%SimpleConn{req_headers: headers}, opts)

    {status, resp_headers, body} =
      if conn.halted,
        do: {conn.status, conn.resp_headers, conn.resp_body},
        else: {200, [{"content-type", "text/plain"}], conn.assigns.svc_claims.subject_type}

    head =
      [
        "HTTP/1.1 #{status} X\r\n",
        "content-length: #{byte_size(body)}\r\n",
        "connection: close\r\n"
      ] ++
        for({k, v} <- resp_headers, do: "#{k}: #{v}\r\n") ++ ["\r\n"]

    :ok = :gen_tcp.send(socket, [head, body])
    :gen_tcp.close(socket)
  end

  defp read_head(socket, acc) do
    if String.contains?(acc, "\r\n\r\n") do
      {:ok, acc}
    else
      {:ok, data} = :gen_tcp.recv(socket, 0, 10_000)
      read_head(socket, acc <> data)
    end
  end
end
