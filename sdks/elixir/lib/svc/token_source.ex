defmodule Svc.TokenSource do
  @moduledoc """
  A machine token from the client credentials grant, fetched on first use and again 30 s before
  it expires. One process holds it, so concurrent callers share one fetch and one token.

      {:ok, tokens} = Svc.TokenSource.start_link(client, scope: "applications:read")
      {:ok, access_token} = Svc.TokenSource.access_token(tokens)

  Put it under your supervisor for long-lived use (`child_spec/1` takes
  `{client, opts}`).
  """
  use GenServer

  @renew_early 30

  @doc """
  Starts a token source for `client` (a `Svc.Client` with a secret). Options: `:scope`,
  `:resource` (RFC 8707), `:name`.
  """
  @spec start_link(Svc.Client.t(), keyword) :: GenServer.on_start()
  def start_link(%Svc.Client{} = client, opts \\ []) do
    {name, opts} = Keyword.pop(opts, :name)
    gen_opts = if name, do: [name: name], else: []
    GenServer.start_link(__MODULE__, {client, opts}, gen_opts)
  end

  @doc false
  def child_spec({client, opts}) do
    %{id: Keyword.get(opts, :name, __MODULE__), start: {__MODULE__, :start_link, [client, opts]}}
  end

  @doc "A token valid for at least 30 s more, from the cache or a new grant."
  @spec access_token(GenServer.server()) :: {:ok, String.t()} | {:error, Svc.Client.error()}
  def access_token(source), do: GenServer.call(source, :access_token, 30_000)

  @doc "Forgets the cached token (e.g. after the API refused it as revoked)."
  @spec invalidate(GenServer.server()) :: :ok
  def invalidate(source), do: GenServer.call(source, :invalidate)

  @doc "The client whose credentials this source uses."
  @spec client(GenServer.server()) :: Svc.Client.t()
  def client(source), do: GenServer.call(source, :client)

  @impl true
  def init({client, opts}) do
    {:ok,
     %{client: client, scope: opts[:scope], resource: opts[:resource], token: nil, renew_at: 0}}
  end

  @impl true
  def handle_call(:access_token, _from, state) do
    now = System.monotonic_time(:second)

    if state.token != nil and now < state.renew_at do
      {:reply, {:ok, state.token}, state}
    else
      case Svc.Client.client_credentials(state.client, state.scope, state.resource) do
        {:ok, tokens} ->
          state = %{
            state
            | token: tokens.access_token,
              renew_at: now + tokens.expires_in - @renew_early
          }

          {:reply, {:ok, tokens.access_token}, state}

        {:error, _} = error ->
          {:reply, error, state}
      end
    end
  end

  def handle_call(:invalidate, _from, state), do: {:reply, :ok, %{state | token: nil}}
  def handle_call(:client, _from, state), do: {:reply, state.client, state}
end
