"""The Pygments theme code blocks use, shared by the stream widget and its renderer."""

DEFAULT_CODE_THEME = "monokai"
