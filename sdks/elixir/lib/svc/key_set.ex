defmodule Svc.KeySet do
  @moduledoc """
  An issuer's JWKS, fetched and cached by one process: fresh for ten minutes, and refreshed at
  most once a minute when a token names an unknown `kid` (so forged `kid`s cannot make a server
  hammer the issuer). Calls are serialized, so concurrent callers share one fetch.

  Keys that cannot be understood are skipped, not fatal (RFC 7517 §5); the first key of a
  repeated `kid` wins.

  `Svc.Client.discover/2` and `Svc.Validator` start one, linked to the caller; put them under
  your supervisor for long-lived use.
  """
  use GenServer

  @ttl_ms 10 * 60 * 1000
  @kid_refresh_ms 60 * 1000

  @doc """
  Starts the cache for `uri`. Options: `:http` (see `Svc.HTTP`), `:clock` (a 0-arity function
  returning monotonic milliseconds, for tests).
  """
  @spec start_link(String.t(), keyword) :: GenServer.on_start()
  def start_link(uri, opts \\ []) do
    GenServer.start_link(__MODULE__, {uri, opts})
  end

  @doc """
  The key for `kid` and `alg` (see `Svc.JWT.public_key/2`). Errors: `{:error, :unknown_key}`,
  or `{:error, %Svc.ClientError{}}` when the JWKS cannot be fetched.
  """
  @spec key(GenServer.server(), String.t(), String.t()) ::
          {:ok, Svc.JWT.key()} | {:error, :unknown_key | Svc.ClientError.t()}
  def key(server, kid, alg), do: GenServer.call(server, {:key, kid, alg}, 30_000)

  @impl true
  def init({uri, opts}) do
    clock = Keyword.get(opts, :clock, fn -> System.monotonic_time(:millisecond) end)
    http = Keyword.get(opts, :http, &Svc.HTTP.request/2)
    {:ok, %{uri: uri, http: http, clock: clock, keys: nil, fetched: nil, last_kid: nil}}
  end

  @impl true
  def handle_call({:key, kid, alg}, _from, state) do
    now = state.clock.()
    fresh = state.keys != nil and now - state.fetched < @ttl_ms
    known = fresh and Map.has_key?(state.keys, kid)
    may_refresh = state.last_kid == nil or now - state.last_kid >= @kid_refresh_ms

    result =
      if not fresh or (not known and may_refresh) do
        state = if fresh, do: %{state | last_kid: now}, else: state
        fetch(state, now)
      else
        {:ok, state}
      end

    case result do
      {:ok, state} ->
        reply =
          case Map.fetch(state.keys, kid) do
            {:ok, jwk} -> Svc.JWT.public_key(jwk, alg)
            :error -> {:error, :unknown_key}
          end

        {:reply, reply, state}

      {:error, error, state} ->
        {:reply, {:error, error}, state}
    end
  end

  defp fetch(state, now) do
    case Svc.HTTP.get_json(state.uri, state.http) do
      {:ok, %{"keys" => keys}} when is_list(keys) ->
        by_kid =
          Enum.reduce(keys, %{}, fn
            %{"kid" => kid} = jwk, acc when is_binary(kid) and kid != "" ->
              Map.put_new(acc, kid, jwk)

            _, acc ->
              acc
          end)

        {:ok, %{state | keys: by_kid, fetched: now}}

      {:ok, _} ->
        {:error, Svc.ClientError.exception("the issuer's keys are unavailable: not a JWK Set"),
         state}

      {:error, %Svc.ClientError{message: message}} ->
        {:error, Svc.ClientError.exception("the issuer's keys are unavailable: " <> message),
         state}
    end
  end
end
