defmodule Svc.Error do
  @moduledoc """
  A refusal by svc: an OAuth error answer (RFC 6749 §5.2), an authorization callback's `error`,
  or a management API problem (RFC 9457), with its code.

    * `:endpoint` — `"token"`, `"userinfo"`, `"authorization"` or `"api"`;
    * `:status` — the HTTP status (0 for an authorization callback error);
    * `:code` — e.g. `"invalid_grant"`, `"access_denied"`, `"insufficient_scope"`;
    * `:description` — the `error_description`, or the problem's `detail`.

  The message names the endpoint, status and code only: never a token, code or secret.
  """
  defexception endpoint: nil, status: 0, code: "server_error", description: nil

  @type t :: %__MODULE__{
          endpoint: String.t(),
          status: non_neg_integer,
          code: String.t(),
          description: String.t() | nil
        }

  @impl true
  def message(%{endpoint: endpoint, status: status, code: code}),
    do: "svc #{endpoint} refused the request (#{status}): #{code}"

  @doc false
  # Reads an OAuth error or problem body, whatever its shape.
  def from_response(endpoint, %{status: status, body: body}) do
    doc =
      case Svc.JSON.decode(body) do
        {:ok, %{} = doc} -> doc
        _ -> %{}
      end

    text = fn name -> if is_binary(doc[name]) and doc[name] != "", do: doc[name] end

    %__MODULE__{
      endpoint: endpoint,
      status: status,
      code: text.("error") || "server_error",
      description: text.("error_description") || text.("detail")
    }
  end
end

defmodule Svc.ClientError do
  @moduledoc """
  A failure on the SDK's side of a call: the network, a document that is not what the protocol
  says, or a misuse (e.g. a missing redirect URI). Its message never contains a token, code,
  secret or claim value.
  """
  defexception [:message]

  @type t :: %__MODULE__{message: String.t()}

  @impl true
  def exception(message) when is_binary(message), do: %__MODULE__{message: message}
  def exception(opts), do: %__MODULE__{message: Keyword.fetch!(opts, :message)}
end

defmodule Svc.IDTokenError do
  @moduledoc """
  An ID token that failed a check of OpenID Connect Core 1.0 §3.1.3.7; `:reason` says which,
  without any claim value.
  """
  defexception [:reason]

  @type t :: %__MODULE__{reason: String.t()}

  @impl true
  def message(%{reason: reason}), do: "svc: the ID token is not valid: " <> reason
end
