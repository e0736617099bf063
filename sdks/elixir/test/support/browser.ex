defmodule Svc.Test.Browser do
  @moduledoc """
  A cookie-keeping browser for the live test: `:httpc` with no redirects, and a jar that sends
  every cookie svc set back to the same (loopback) host. Deliberately minimal: one host, no
  paths or expiry beyond `Max-Age=0`, which is all svc's hosted pages need.
  """

  def start, do: Agent.start_link(fn -> %{} end)

  def get(jar, url), do: request(jar, %{method: :get, url: url, headers: [], body: nil})

  def post_form(jar, url, form) do
    request(jar, %{
      method: :post,
      url: url,
      headers: [{"content-type", "application/x-www-form-urlencoded"}],
      body: URI.encode_query(form)
    })
  end

  defp request(jar, req) do
    cookies = Agent.get(jar, & &1)

    headers =
      if map_size(cookies) > 0,
        do: [
          {"cookie", Enum.map_join(cookies, "; ", fn {k, v} -> k <> "=" <> v end)} | req.headers
        ],
        else: req.headers

    {:ok, resp} = Svc.HTTP.request(%{req | headers: headers})

    for {"set-cookie", line} <- resp.headers do
      [pair | attrs] = String.split(line, ";")
      [name, value] = String.split(String.trim(pair), "=", parts: 2)
      gone = Enum.any?(attrs, &(String.trim(String.downcase(&1)) == "max-age=0"))

      Agent.update(jar, fn c ->
        if gone, do: Map.delete(c, name), else: Map.put(c, name, value)
      end)
    end

    resp
  end
end
