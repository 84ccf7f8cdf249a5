"""Provenance as an MCP server of its own (`provenance mcp`): the questions a person asks in the chat, as tools other
agents can call. Read and measure only: no tool writes to DataHub."""
