defmodule Svc.ValidatorTest do
  use ExUnit.Case, async: true

  alias Svc.{JWT, Plug, ValidationError, Validator}
  alias Svc.Plug.SimpleConn
  alias Svc.Test.Keys

  @issuer "https://acme.id.example"

  test "access token rules, in order" do
    now = 1_800_000_000

    req = [
      audience: "https://api.example",
      tenant_id: "ten_1",
      scope: "invoices:read",
      organization: "org_1"
    ]

    base = %{
      "iss" => @issuer,
      "aud" => "https://api.example",
      "sub" => "usr_1",
      "exp" => now + 60,
      "tenant_id" => "ten_1",
      "org_id" => "org_1",
      "scope" => "openid invoices:read",
      "subject_type" => "human",
      "client_id" => "app_1"
    }

    assert {:ok, %Svc.Claims{org: "org_1", subject: "usr_1", scopes: ["openid", "invoices:read"]}} =
             Validator.check_access_claims(base, @issuer, req, now)

    for {name, patch, status, code} <- [
          {"issuer", %{"iss" => "https://evil.test"}, 401, "invalid_token"},
          {"audience", %{"aud" => "https://other.example"}, 401, "invalid_token"},
          {"audience list", %{"aud" => ["https://other.example"]}, 401, "invalid_token"},
          {"expired", %{"exp" => now - 10}, 401, "invalid_token"},
          {"no exp", %{"exp" => nil}, 401, "invalid_token"},
          {"not yet", %{"nbf" => now + 60}, 401, "invalid_token"},
          {"tenant first", %{"tenant_id" => "ten_2", "scope" => ""}, 403, "forbidden"},
          {"organization", %{"org_id" => "org_2"}, 403, "forbidden"},
          {"two orgs", %{"org" => "org_2"}, 401, "invalid_token"},
          {"scope", %{"scope" => "invoices:write"}, 403, "insufficient_scope"},
          {"subject type", %{"subject_type" => "robot"}, 403, "forbidden"},
          {"delegation", %{"act" => %{"sub" => "agt_1"}}, 403, "forbidden"},
          {"dpop bound", %{"cnf" => %{"jkt" => "x"}}, 401, "invalid_token"},
          {"no subject", %{"sub" => nil}, 401, "invalid_token"}
        ] do
      claims = base |> Map.merge(patch) |> Enum.reject(fn {_, v} -> v == nil end) |> Map.new()

      assert {:error, %ValidationError{status: ^status, code: ^code}} =
               Validator.check_access_claims(claims, @issuer, req, now),
             name
    end

    # The legacy org claim, an accepted delegation, a malformed one, and audience lists.
    legacy = base |> Map.delete("org_id") |> Map.put("org", "org_1")
    assert {:ok, %{org: "org_1"}} = Validator.check_access_claims(legacy, @issuer, req, now)
    delegated = Map.put(base, "act", %{"sub" => "agt_1"})

    assert {:ok, _} =
             Validator.check_access_claims(delegated, @issuer, req ++ [delegation: true], now)

    assert {:error, %{code: "forbidden"}} =
             Validator.check_access_claims(
               Map.put(base, "act", "x"),
               @issuer,
               req ++ [delegation: true],
               now
             )

    # The route's delegation policy: chain length and the parties trusted to act.
    chain = %{
      "sub" => "app_gw",
      "client_id" => "app_gw",
      "act" => %{"sub" => "agt_1", "act" => %{"sub" => "agt_0"}}
    }

    three = Map.put(base, "act", chain)
    allowing = req ++ [delegation: true]
    assert {:ok, _} = Validator.check_access_claims(three, @issuer, allowing, now)

    assert {:error, %{status: 403, reason: "the delegation chain is longer" <> _}} =
             Validator.check_access_claims(
               three,
               @issuer,
               allowing ++ [max_delegation_depth: 2],
               now
             )

    assert {:ok, _} =
             Validator.check_access_claims(
               three,
               @issuer,
               allowing ++ [trusted_actors: ["app_gw"]],
               now
             )

    assert {:error, %{code: "forbidden", reason: "the party acting" <> _}} =
             Validator.check_access_claims(
               three,
               @issuer,
               allowing ++ [trusted_actors: ["agt_1"]],
               now
             )

    for act <- [
          %{"sub" => ""},
          %{"sub" => "a", "act" => %{"sub" => 5}},
          %{"sub" => "a", "act" => nil}
        ] do
      assert {:error, %{reason: "the delegation chain is malformed"}} =
               Validator.check_access_claims(Map.put(base, "act", act), @issuer, allowing, now)
    end

    deep =
      Enum.reduce(1..12, %{"sub" => "a0"}, fn i, inner -> %{"sub" => "a#{i}", "act" => inner} end)

    assert {:error, %{reason: "the delegation chain is malformed"}} =
             Validator.check_access_claims(
               Map.put(base, "act", deep),
               @issuer,
               allowing ++ [max_delegation_depth: 100],
               now
             )

    listed = Map.put(base, "aud", ["https://x.example", "https://api.example"])
    assert {:ok, _} = Validator.check_access_claims(listed, @issuer, req, now)

    assert {:error, %{status: 403}} =
             Validator.check_access_claims(base, @issuer, Keyword.put(req, :tenant_id, nil), now)

    challenge = %ValidationError{code: "insufficient_scope", scope: "invoices:read"}

    assert ValidationError.www_authenticate(challenge) ==
             ~s(Bearer error="insufficient_scope", scope="invoices:read")

    assert ValidationError.www_authenticate(ValidationError.invalid("bad")) ==
             ~s(Bearer error="invalid_token", error_description="bad")
  end

  describe "whole tokens through the validator and the plug" do
    setup do
      {ec, ec_jwk} = Keys.ec()
      {ed, ed_jwk} = Keys.ed()
      {rsa, rsa_jwk} = Keys.rsa()
      jwks = @issuer <> "/jwks"

      http = fn %{url: url}, _ ->
        doc =
          case url do
            @issuer <> "/.well-known/openid-configuration" ->
              %{"issuer" => @issuer, "jwks_uri" => jwks}

            ^jwks ->
              %{
                "keys" => [
                  Map.put(ec_jwk, "kid", "ec"),
                  Map.put(ed_jwk, "kid", "ed"),
                  Map.put(rsa_jwk, "kid", "rsa")
                ]
              }
          end

        {:ok, %{status: 200, headers: [], body: Svc.JSON.encode!(doc)}}
      end

      {:ok, validator} = Validator.start_link(@issuer, http: http)

      claims = %{
        "iss" => @issuer,
        "aud" => "https://api.example",
        "sub" => "svc_1",
        "exp" => System.os_time(:second) + 60,
        "tenant_id" => "ten_1",
        "scope" => "invoices:read",
        "subject_type" => "system"
      }

      %{validator: validator, ec: ec, ed: ed, rsa: rsa, claims: claims}
    end

    test "rules 1 and 2", ctx do
      req = [audience: "https://api.example", tenant_id: "ten_1"]
      es = JWT.sign(%{"alg" => "ES256", "kid" => "ec", "typ" => "at+jwt"}, ctx.claims, ctx.ec)

      ed =
        JWT.sign(
          %{"alg" => "EdDSA", "kid" => "ed", "typ" => "application/at+jwt"},
          ctx.claims,
          ctx.ed
        )

      assert {:ok, %{subject_type: "system"}} =
               Validator.validate(ctx.validator, "Bearer " <> es, req)

      assert {:ok, _} = Validator.validate(ctx.validator, "bearer " <> ed, req)

      refused = fn header -> elem(Validator.validate(ctx.validator, header, req), 1) end
      assert %{status: 401, code: "unauthorized"} = refused.(nil)
      assert %{code: "unauthorized"} = refused.("Basic abc")
      assert %{code: "unauthorized"} = refused.("Bearer")
      assert %{code: "invalid_token"} = refused.("Bearer ")
      assert %{code: "invalid_token"} = refused.("Bearer " <> es <> " " <> es)
      rs = JWT.sign(%{"alg" => "RS256", "kid" => "rsa", "typ" => "at+jwt"}, ctx.claims, ctx.rsa)

      assert %{reason: "signed with an algorithm that is not accepted"} =
               refused.("Bearer " <> rs)

      untyped = JWT.sign(%{"alg" => "ES256", "kid" => "ec"}, ctx.claims, ctx.ec)

      assert %{reason: "the token is not a JWT access token (typ must be at+jwt)"} =
               refused.("Bearer " <> untyped)

      crit =
        JWT.sign(
          %{"alg" => "ES256", "kid" => "ec", "typ" => "at+jwt", "crit" => []},
          ctx.claims,
          ctx.ec
        )

      assert %{code: "invalid_token"} = refused.("Bearer " <> crit)
      nokid = JWT.sign(%{"alg" => "ES256", "typ" => "at+jwt"}, ctx.claims, ctx.ec)
      assert %{code: "invalid_token"} = refused.("Bearer " <> nokid)
      # The EdDSA key named for an ES256 token, and a token signed by another key.
      swapped =
        JWT.sign(%{"alg" => "ES256", "kid" => "ed", "typ" => "at+jwt"}, ctx.claims, ctx.ec)

      assert %{code: "invalid_token"} = refused.("Bearer " <> swapped)
      {other, _} = Keys.ec()
      forged = JWT.sign(%{"alg" => "ES256", "kid" => "ec", "typ" => "at+jwt"}, ctx.claims, other)
      assert %{reason: "the signature is invalid"} = refused.("Bearer " <> forged)
    end

    test "the plug answers refusals and passes claims on", ctx do
      es = JWT.sign(%{"alg" => "ES256", "kid" => "ec", "typ" => "at+jwt"}, ctx.claims, ctx.ec)

      opts =
        Plug.init(
          validator: ctx.validator,
          adapter: SimpleConn,
          audience: "https://api.example",
          tenant_id: "ten_1",
          scope: "invoices:read"
        )

      conn = Plug.call(%SimpleConn{req_headers: [{"Authorization", "Bearer " <> es}]}, opts)
      refute conn.halted
      assert %Svc.Claims{subject: "svc_1"} = conn.assigns.svc_claims

      conn = Plug.call(%SimpleConn{}, opts)
      assert conn.halted and conn.status == 401
      assert {"www-authenticate", "Bearer"} in conn.resp_headers

      assert Svc.JSON.decode!(conn.resp_body) == %{
               "error" => "unauthorized",
               "error_description" => "an access token is required"
             }

      two = [{"authorization", "Bearer " <> es}, {"authorization", "Bearer " <> es}]
      assert %{status: 401, halted: true} = Plug.call(%SimpleConn{req_headers: two}, opts)

      scoped =
        Plug.init(
          validator: ctx.validator,
          adapter: SimpleConn,
          audience: "https://api.example",
          tenant_id: "ten_1",
          scope: "invoices:write"
        )

      conn = Plug.call(%SimpleConn{req_headers: [{"authorization", "Bearer " <> es}]}, scoped)
      assert conn.status == 403

      assert {"www-authenticate", ~s(Bearer error="insufficient_scope", scope="invoices:write")} in conn.resp_headers

      assert_raise ArgumentError, fn -> Plug.init(audience: "x") end
    end

    test "keys that cannot be fetched are a 503" do
      {:ok, validator} =
        Validator.start_link(@issuer,
          http: fn _, _ -> {:error, Svc.ClientError.exception("down")} end
        )

      token = "eyJhbGciOiJFUzI1NiIsImtpZCI6ImVjIiwidHlwIjoiYXQrand0In0.e30.sig"

      assert {:error, %ValidationError{status: 503}} =
               Validator.validate(validator, "Bearer " <> token, audience: "a", tenant_id: "t")
    end
  end
end
