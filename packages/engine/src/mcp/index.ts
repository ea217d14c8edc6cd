// The MCP layer: the same six tools in-process on an engine's memory service (POST /mcp) and over HTTP (`mnemos mcp`).
export { createMcpServer, type McpServerOptions } from './server.js';
export { engineBackend, type MemoryBackend } from './backend.js';
export { httpBackend } from './http-backend.js';
