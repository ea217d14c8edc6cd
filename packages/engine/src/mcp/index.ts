// The MCP layer (DESIGN 2.1): the same six tools over streamable HTTP (POST /mcp, in-process) and stdio (`mnemos mcp`).
export { mcpRoutes } from './routes.js';
export { createMcpServer, type McpServerOptions } from './server.js';
export { engineBackend, type MemoryBackend } from './backend.js';
export { httpBackend } from './http-backend.js';
