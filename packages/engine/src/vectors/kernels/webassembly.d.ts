/**
 * The part of the WebAssembly JS API that simd.ts uses. Node has the API; TypeScript's declarations for it ship only
 * in the DOM library, which a server package should not pull in.
 */
declare namespace WebAssembly {
  class Module {
    constructor(bytes: BufferSource);
  }
  class Instance {
    constructor(module: Module, imports?: Record<string, Record<string, unknown>>);
    readonly exports: Record<string, unknown>;
  }
  class Memory {
    readonly buffer: ArrayBuffer;
    grow(pages: number): number;
  }
}

type BufferSource = ArrayBufferView | ArrayBuffer;
