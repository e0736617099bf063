defmodule Svc.WebhookTest do
  use ExUnit.Case, async: true

  alias Svc.Webhook

  # HMAC-SHA256("whsec_test", "dlv_1.1800000000.{\"id\":\"evt_1\"}"), computed independently
  # (Python's hmac module); the Go SDK's test uses the same vector.
  @vector "30bd2a6e6d421dc3a86c9e4101ea0796feb71758e312b59fe0d9dbcceec2c314"
  @body ~s({"id":"evt_1"})
  @now 1_800_000_010

  defp headers(extra \\ %{}) do
    Map.merge(
      %{
        "X-SVC-Signature-Suite" => "svc-webhook-v1",
        "X-SVC-Delivery" => "dlv_1",
        "X-SVC-Timestamp" => "1800000000",
        "X-SVC-Event" => "user.created",
        "X-SVC-Signature-256" => "sha256=" <> String.duplicate("0", 64) <> " sha256=" <> @vector
      },
      extra
    )
  end

  test "a delivery verifies against the fixed vector, under a rotated secret" do
    assert {:ok,
            %Webhook{
              delivery_id: "dlv_1",
              event: "user.created",
              timestamp: 1_800_000_000,
              body: @body
            }} = Webhook.verify(headers(), @body, ["whsec_old", "whsec_test"], 300, @now)

    # Header names in any case, as a list of pairs; upper-case hex.
    pairs = for {k, v} <- headers(), do: {String.downcase(k), v}
    assert {:ok, _} = Webhook.verify(pairs, @body, ["whsec_test"], 300, @now)
    upper = headers(%{"X-SVC-Signature-256" => "sha256=" <> String.upcase(@vector)})
    assert {:ok, _} = Webhook.verify(upper, @body, ["whsec_test"], 300, @now)
  end

  test "refusals" do
    reason = fn headers, body, secrets, now ->
      {:error, %Webhook.Error{reason: reason}} = Webhook.verify(headers, body, secrets, 300, now)
      reason
    end

    assert reason.(headers(), ~s({"id":"evt_2"}), ["whsec_test"], @now) == :signature
    assert reason.(headers(), @body, ["whsec_other"], @now) == :signature
    assert reason.(headers(), @body, [], @now) == :signature
    assert reason.(headers(), @body <> " ", ["whsec_test"], @now) == :signature
    assert reason.(headers(), @body, ["whsec_test"], 1_800_000_400) == :stale
    assert reason.(headers(), @body, ["whsec_test"], 1_799_999_900) == :future

    assert reason.(headers(%{"X-SVC-Signature-Max-Age" => "5"}), @body, ["whsec_test"], @now) ==
             :stale

    # A sender's longer window does not widen the receiver's ceiling.
    assert reason.(
             headers(%{"X-SVC-Signature-Max-Age" => "100000"}),
             @body,
             ["whsec_test"],
             1_800_000_400
           ) == :stale

    assert reason.(
             headers(%{"X-SVC-Signature-Suite" => "svc-webhook-v0"}),
             @body,
             ["whsec_test"],
             @now
           ) == :suite

    assert reason.(Map.delete(headers(), "X-SVC-Signature-Suite"), @body, ["whsec_test"], @now) ==
             :suite

    assert reason.(Map.delete(headers(), "X-SVC-Delivery"), @body, ["whsec_test"], @now) ==
             :missing_headers

    assert reason.(headers(%{"X-SVC-Timestamp" => "soon"}), @body, ["whsec_test"], @now) ==
             :timestamp

    assert reason.(headers(%{"X-SVC-Signature-256" => @vector}), @body, ["whsec_test"], @now) ==
             :no_signature

    assert reason.(
             headers(%{"X-SVC-Signature-256" => "sha256=" <> String.slice(@vector, 1..-1)}),
             @body,
             ["whsec_test"],
             @now
           ) == :no_signature

    # Another delivery id or timestamp changes the signed string.
    assert reason.(headers(%{"X-SVC-Delivery" => "dlv_2"}), @body, ["whsec_test"], @now) ==
             :signature

    assert reason.(headers(%{"X-SVC-Timestamp" => "1800000001"}), @body, ["whsec_test"], @now) ==
             :signature

    big = String.duplicate("a", 1024 * 1024 + 1)
    assert reason.(headers(), big, ["whsec_test"], @now) == :too_large
  end
end
