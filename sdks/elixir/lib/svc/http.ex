defmodule Svc.HTTP do
  @moduledoc """
  The SDK's HTTP transport: OTP's `:httpc` with the rules every call to svc follows.

    * Redirects are never followed: none is part of these protocols, and following one could
      leave the issuer.
    * `https` peers are verified against the operating system's CA store
      (`:public_key.cacerts_get/0`) with hostname checking.
    * A 10 s timeout, and answers over 1 MiB are refused (`:httpc` reads the whole body, so
      the bound is checked after reading; svc's documents are far smaller).

  The `:http` option of `Svc.Client.discover/2` and `Svc.Validator.start_link/2` takes a
  2-arity function `(request, opts) -> result` with the same shape as `request/2`, for
  callers that need their own transport (a proxy, a custom CA).
  """

  @max_body 1024 * 1024
  @timeout 10_000

  @typedoc "A request: method, URL, headers (lower-case names) and an optional body."
  @type request :: %{
          method: :get | :post | :put | :patch | :delete,
          url: String.t(),
          headers: [{String.t(), String.t()}],
          body: iodata | nil
        }

  @typedoc "An answer: status, headers (lower-case names, in order) and the body."
  @type response :: %{status: non_neg_integer, headers: [{String.t(), String.t()}], body: binary}

  @doc "Sends `request`. Returns `{:ok, response}` or `{:error, %Svc.ClientError{}}`."
  @spec request(request, keyword) :: {:ok, response} | {:error, Svc.ClientError.t()}
  def request(%{method: method, url: url} = req, opts \\ []) do
    headers = Enum.map(req[:headers] || [], fn {k, v} -> {to_charlist(k), to_charlist(v)} end)
    target = to_charlist(url)
    body = req[:body]

    request =
      if method in [:post, :put, :patch] or body != nil do
        {type, rest} = content_type(headers)
        {target, rest, type, IO.iodata_to_binary(body || "")}
      else
        {target, headers}
      end

    http_opts =
      [
        timeout: Keyword.get(opts, :timeout, @timeout),
        connect_timeout: @timeout,
        autoredirect: false
      ] ++
        ssl_opts(url)

    case :httpc.request(method, request, http_opts, body_format: :binary) do
      {:ok, {{_version, status, _reason}, resp_headers, resp_body}} ->
        if byte_size(resp_body) > @max_body do
          {:error, Svc.ClientError.exception("the answer of #{host(url)} is too large")}
        else
          headers =
            Enum.map(resp_headers, fn {k, v} -> {String.downcase(to_string(k)), to_string(v)} end)

          {:ok, %{status: status, headers: headers, body: resp_body}}
        end

      {:error, reason} ->
        {:error, Svc.ClientError.exception("#{host(url)} is unreachable: #{short(reason)}")}
    end
  end

  @doc "The first value of header `name` (lower-case) in `response`, or `nil`."
  @spec header(response, String.t()) :: String.t() | nil
  def header(%{headers: headers}, name) do
    Enum.find_value(headers, fn {k, v} -> if k == name, do: v end)
  end

  @doc """
  GETs a JSON document; anything but 200 with a JSON body is an error. The URL is named in
  errors without its query.
  """
  @spec get_json(String.t(), (request, keyword -> term)) ::
          {:ok, term} | {:error, Svc.ClientError.t()}
  def get_json(url, http \\ &request/2) do
    case http.(
           %{method: :get, url: url, headers: [{"accept", "application/json"}], body: nil},
           []
         ) do
      {:ok, %{status: 200, body: body}} ->
        case Svc.JSON.decode(body) do
          {:ok, doc} -> {:ok, doc}
          {:error, _} -> {:error, Svc.ClientError.exception("#{strip(url)} is not JSON")}
        end

      {:ok, %{status: status}} ->
        {:error, Svc.ClientError.exception("#{strip(url)} answered #{status}")}

      {:error, _} = error ->
        error
    end
  end

  defp content_type(headers) do
    case List.keytake(headers, 'content-type', 0) do
      {{_, type}, rest} -> {type, rest}
      nil -> {'application/octet-stream', headers}
    end
  end

  defp ssl_opts("https:" <> _) do
    [
      ssl: [
        verify: :verify_peer,
        cacerts: :public_key.cacerts_get(),
        depth: 10,
        customize_hostname_check: [match_fun: :public_key.pkix_verify_hostname_match_fun(:https)]
      ]
    ]
  end

  defp ssl_opts(_), do: []

  defp host(url), do: URI.parse(url).host || "the server"
  defp strip(url), do: url |> String.split("?", parts: 2) |> hd()

  defp short({:failed_connect, _}), do: "connection failed"
  defp short(:timeout), do: "timeout"
  defp short(reason) when is_atom(reason), do: Atom.to_string(reason)
  defp short(_), do: "transport error"
end
