defmodule Svc.JSONTest do
  use ExUnit.Case, async: true

  alias Svc.JSON

  test "decodes every kind of value" do
    assert JSON.decode(~s( {"a": [1, -2, 3.5, 1e3, -0.25E-2, true, false, null], "b": {}} )) ==
             {:ok, %{"a" => [1, -2, 3.5, 1.0e3, -0.0025, true, false, nil], "b" => %{}}}

    assert JSON.decode("[]") == {:ok, []}
    assert JSON.decode(~s("x")) == {:ok, "x"}
    assert JSON.decode("12345678901234567890123") == {:ok, 12_345_678_901_234_567_890_123}
  end

  test "decodes escapes, unicode escapes and surrogate pairs" do
    assert JSON.decode(~S("a\"b\\c\/d\b\f\n\r\t")) == {:ok, "a\"b\\c/d\b\f\n\r\t"}
    assert JSON.decode(~S("\u00e9\u4e2d")) == {:ok, "é中"}
    assert JSON.decode(~S("\ud83d\ude00")) == {:ok, "😀"}
    assert JSON.decode(~S("\uD83D\uDE00")) == {:ok, "😀"}
    assert JSON.decode(~s("raw é 😀")) == {:ok, "raw é 😀"}
  end

  test "refuses lone surrogates, bad escapes and invalid UTF-8" do
    for bad <- [
          ~S("\ud83d"),
          ~S("\ud83dx"),
          ~S("\ude00"),
          ~S("\ud83d\u0041"),
          ~S("\x"),
          ~S("\u12g4"),
          ~S("\u+123"),
          <<?", 0xFF, ?">>,
          <<?", 0xC3, ?">>,
          "\"a\nb\""
        ] do
      assert {:error, _} = JSON.decode(bad), inspect(bad)
    end
  end

  test "refuses what RFC 8259 does not allow" do
    for bad <- [
          "",
          " ",
          "01",
          "1.",
          ".5",
          "-",
          "+1",
          "1e",
          "[1,]",
          "{\"a\":1,}",
          "{a:1}",
          "[1 2]",
          "nul",
          "tru",
          "{\"a\" 1}",
          "\"open",
          "[1] x",
          "NaN",
          "{\"a\":}",
          "'x'"
        ] do
      assert {:error, reason} = JSON.decode(bad), inspect(bad)
      assert is_binary(reason)
    end
  end

  test "limits nesting depth" do
    deep = fn n -> String.duplicate("[", n) <> String.duplicate("]", n) end
    assert {:ok, _} = JSON.decode(deep.(64))
    assert {:error, reason} = JSON.decode(deep.(65))
    assert reason =~ "nesting too deep"

    assert {:error, _} =
             JSON.decode(String.duplicate(~s({"a":), 65) <> "1" <> String.duplicate("}", 65))

    assert {:ok, _} = JSON.decode(deep.(10), max_depth: 10)
    assert {:error, _} = JSON.decode(deep.(11), max_depth: 10)
    # Hostile depth fails fast instead of exhausting anything.
    assert {:error, _} = JSON.decode(deep.(100_000))
  end

  test "a repeated member keeps its last value" do
    assert JSON.decode(~s({"a":1,"a":2})) == {:ok, %{"a" => 2}}
  end

  test "encodes and round-trips" do
    value = %{
      "s" => "quote \" backslash \\ nl \n tab \t ctl \u0001 é 😀 \u2028",
      "n" => [0, -1, 1.5, 1.0e20],
      "b" => [true, false, nil],
      "o" => %{"nested" => []}
    }

    encoded = JSON.encode!(value)
    assert encoded =~ ~S(\u0001)
    assert encoded =~ ~S(\u2028)
    assert encoded =~ "é 😀"
    assert JSON.decode(encoded) == {:ok, value}
    assert JSON.encode!(%{a: :b}) == ~s({"a":"b"})
    assert JSON.encode!("") == ~s("")
  end

  test "refuses what JSON cannot hold" do
    assert {:error, _} = JSON.encode(%{1 => 2})
    assert {:error, _} = JSON.encode({:tuple})
    assert {:error, _} = JSON.encode(<<0xFF>>)
    assert_raise ArgumentError, fn -> JSON.decode!("[") end
  end
end
