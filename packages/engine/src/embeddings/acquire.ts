import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { makePrivate, PRIVATE_DIR } from '../util/private-files.js';
import { describeFailure, downloadFixes, ModelUnavailableError } from './model-error.js';
import { downloadResumable } from './resumable-download.js';
import { errorMessage } from '../util/error-message.js';

/** Start-up progress for `/health`: the stage and how far it is (0..1). */
export type StartupProgress = (stage: string, progress: number) => void;

export interface AcquireModelOptions {
  /** A hub model id such as Xenova/all-MiniLM-L6-v2. */
  model: string;
  /** MNEMOS_HOME/models: the model lands in `modelsDir/<model id>/` in the transformers.js layout. */
  modelsDir: string;
  /** The hub's address (https://huggingface.co or a mirror serving `<id>/resolve/main/<file>`). */
  hubUrl: string;
  dtype: 'fp32' | 'q8';
  log: (message: string) => void;
  /** Reports the weights' download as `('downloading model', 0..1)`. */
  onProgress?: StartupProgress;
}

export const DOWNLOAD_STAGE = 'downloading model';

/** The files the engine loads for a feature-extraction model; the weights last (they are nearly all the bytes). */
export function modelFiles(dtype: 'fp32' | 'q8'): string[] {
  return [
    'config.json',
    'tokenizer_config.json',
    'tokenizer.json',
    dtype === 'q8' ? 'onnx/model_quantized.onnx' : 'onnx/model.onnx',
  ];
}

export function hubFileUrl(hubUrl: string, model: string, file: string): string {
  return `${hubUrl.replace(/\/+$/, '')}/${model}/resolve/main/${file}`;
}

/**
 * Makes sure the model's files are in `modelsDir/<model id>/`, downloading the missing ones from the hub. A file is
 * downloaded under `<name>.part` (continued on the next start if cut), verified (size against the announced length,
 * JSON parses, the ONNX weights load) and only then renamed into place, so a file under its real name is always
 * complete. With every file present nothing touches the network. Resolves with the model folder.
 */
export async function acquireModel(options: AcquireModelOptions): Promise<string> {
  const folder = join(options.modelsDir, options.model);
  // The cache is private like the rest of MNEMOS_HOME (earlier releases left it readable by every user).
  makePrivate(options.modelsDir);
  const missing = modelFiles(options.dtype).filter((file) => !existsSync(join(folder, file)));
  if (missing.length === 0) return folder;
  options.log(`downloading embedding model ${options.model} from ${options.hubUrl} into ${folder} (first start)`);
  for (const file of missing) {
    const url = hubFileUrl(options.hubUrl, options.model, file);
    const target = join(folder, file);
    const partPath = `${target}.part`;
    await mkdir(dirname(target), { recursive: true, mode: PRIVATE_DIR });
    const progress = progressReporter(`${options.model} ${file}`, options.log);
    const weights = file.endsWith('.onnx');
    let size: number;
    try {
      size = await downloadResumable(url, partPath, {
        onBytes: (loaded, total, received) => {
          progress(loaded, total, received);
          if (weights && total) options.onProgress?.(DOWNLOAD_STAGE, loaded / total);
        },
      });
    } catch (error) {
      throw new ModelUnavailableError(
        `cannot download the embedding model ${options.model} from ${url} (${describeFailure(error)}); ` +
          `${downloadFixes(options.model)}.`,
      );
    }
    await verifyModelFile(partPath, file, url, options.model);
    await rename(partPath, target);
    options.log(`downloaded ${options.model} ${file} (${formatBytes(size)})`);
  }
  return folder;
}

/** Refuses a file that does not parse or load; it is deleted so the next start downloads it afresh. */
async function verifyModelFile(partPath: string, file: string, url: string, model: string): Promise<void> {
  let reason: string | undefined;
  if (file.endsWith('.json')) {
    // JSON.parse's own message quotes the damaged bytes; the file's name says enough.
    if (!isJson(await readFile(partPath, 'utf8'))) reason = 'not valid JSON';
  } else {
    try {
      // Loaded only here: an engine with hosted embeddings, or with its model in place, never loads the native runtime
      // on the main thread.
      const { InferenceSession } = await import('onnxruntime-node');
      const session = await InferenceSession.create(partPath);
      await session.release();
    } catch (error) {
      const message = errorMessage(error);
      reason = `ONNX Runtime cannot load it: ${message.split('\n')[0]}`;
    }
  }
  if (reason === undefined) return;
  await unlink(partPath).catch(() => undefined);
  throw new ModelUnavailableError(
    `the embedding model file ${file} downloaded from ${url} is damaged (${reason}); ` +
      'it was deleted and is downloaded again on the next start; ' +
      `if this repeats, the hub or mirror serves a broken copy; ${downloadFixes(model)}.`,
  );
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * A log line per tenth of a file (bytes, percent, rate), so a first start shows it is working; small files (under a
 * megabyte) only log when done.
 */
function progressReporter(name: string, log: (message: string) => void) {
  const started = performance.now();
  let lastDecile = -1;
  return (loaded: number, total: number | undefined, received: number): void => {
    if (total === undefined || total < 1024 * 1024) return;
    const decile = Math.floor((loaded / total) * 10);
    if (decile <= lastDecile) return;
    lastDecile = decile;
    const seconds = Math.max((performance.now() - started) / 1000, 0.001);
    const bar = '#'.repeat(decile) + '.'.repeat(10 - decile);
    log(
      `downloading model ${name} [${bar}] ${Math.floor((loaded / total) * 100)}% ` +
        `${formatBytes(loaded)} of ${formatBytes(total)} at ${formatBytes(received / seconds)}/s`,
    );
  };
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} kB`;
  return `${Math.round(bytes)} B`;
}
