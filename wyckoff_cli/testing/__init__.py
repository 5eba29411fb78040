"""Test support that ships with the package: the fake vendor server and its wire formats.

`wyckoff_cli.testing.fake_server.FakeServer` replays scripted answers in the Anthropic,
OpenAI and Gemini streaming formats over loopback HTTP (standard library only). Used by
the test suite, the benchmarks and offline demos; nothing here imports a provider SDK.
"""
