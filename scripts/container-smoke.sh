#!/usr/bin/env bash
# Smoke test of the container image, for a machine with Docker (the test suite cannot run Docker; see docs/deploy.md).
#
#   scripts/container-smoke.sh
#
# Builds the image, runs it with a named volume, retains a memory, restarts the container, recalls the memory, tries a
# root-owned bind mount (expects exit code 78 and the permissions message), and prints the image's size.
# The first start downloads the model from the hub; to use a local copy instead, set MNEMOS_SMOKE_MODEL_DIR to a model
# folder (config.json, tokenizer.json, onnx/model.onnx), which is mounted read-only.
# Needs: docker, curl. Uses a free port (MNEMOS_SMOKE_PORT, default 18888) and removes what it creates.
set -euo pipefail

IMAGE=${MNEMOS_SMOKE_IMAGE:-mnemos:smoke}
PORT=${MNEMOS_SMOKE_PORT:-18888}
NAME=mnemos-smoke-$$
VOLUME=mnemos-smoke-$$
BIND_DIR=$(mktemp -d)
ROOT=$(cd "$(dirname "$0")/.." && pwd)

cleanup() {
  docker rm -f "$NAME" "$NAME-bind" >/dev/null 2>&1 || true
  docker volume rm "$VOLUME" >/dev/null 2>&1 || true
  docker run --rm --user 0:0 --entrypoint rm -v "$BIND_DIR:/x" "$IMAGE" -rf /x/home >/dev/null 2>&1 || true
  rm -rf "$BIND_DIR"
}
trap cleanup EXIT

fail() {
  echo "container-smoke: FAILED: $*" >&2
  docker logs "$NAME" 2>&1 | tail -20 >&2 || true
  exit 1
}

model_args=()
if [[ -n "${MNEMOS_SMOKE_MODEL_DIR:-}" ]]; then
  model_args=(-v "$MNEMOS_SMOKE_MODEL_DIR:/model:ro" -e MNEMOS_API_EMBEDDINGS_LOCAL_MODEL=/model)
fi

wait_ready() {
  local deadline=$((SECONDS + ${MNEMOS_SMOKE_TIMEOUT:-300}))
  until [[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/health")" == 200 ]]; do
    [[ "$(docker inspect -f '{{.State.Running}}' "$NAME")" == true ]] \
      || fail "the container stopped before it was ready"
    ((SECONDS < deadline)) || fail "not ready within ${MNEMOS_SMOKE_TIMEOUT:-300} s"
    sleep 2
  done
}

echo "== build $IMAGE"
docker build -t "$IMAGE" "$ROOT"

echo "== first start with the named volume $VOLUME"
docker volume create "$VOLUME" >/dev/null
started=$SECONDS
docker run -d --name "$NAME" -p "127.0.0.1:$PORT:8888" -v "$VOLUME:/data" "${model_args[@]}" "$IMAGE" >/dev/null
wait_ready
echo "ready after $((SECONDS - started)) s"

id=$(curl -sf -X POST "http://127.0.0.1:$PORT/v1/default/banks/smoke/memories" \
  -H 'content-type: application/json' -d '{"content":"The smoke test left a note in the container volume."}' \
  | sed -n 's/.*"memory_ids":\["\([^"]*\)".*/\1/p')
[[ -n "$id" ]] || fail "retain returned no memory id"

echo "== restart (SIGTERM, then start again on the same volume)"
docker stop -t 30 "$NAME" >/dev/null
code=$(docker inspect -f '{{.State.ExitCode}}' "$NAME")
[[ "$code" == 0 ]] || fail "the engine exited with $code on SIGTERM, expected 0"
started=$SECONDS
docker start "$NAME" >/dev/null
wait_ready
echo "ready after $((SECONDS - started)) s (model already in the volume)"
found=$(curl -sf -X POST "http://127.0.0.1:$PORT/v1/default/banks/smoke/memories/recall" \
  -H 'content-type: application/json' -d '{"query":"What did the smoke test leave?"}')
[[ "$found" == *"\"id\":\"$id\""* ]] || fail "recall after the restart did not find memory $id: $found"

echo "== a root-owned bind mount is refused"
docker run --rm --user 0:0 --entrypoint sh -v "$BIND_DIR:/x" "$IMAGE" -c 'mkdir -p /x/home && chown 0:0 /x/home'
set +e
output=$(docker run --name "$NAME-bind" -v "$BIND_DIR/home:/data" "${model_args[@]}" "$IMAGE" 2>&1)
code=$?
set -e
[[ "$code" == 78 ]] || fail "expected exit code 78 for a root-owned /data, got $code: $output"
[[ "$output" == *"MNEMOS_HOME /data is not writable by uid 1000"* ]] || fail "unexpected message: $output"
echo "$output"

echo "== image size"
size=$(docker image inspect -f '{{.Size}}' "$IMAGE")
echo "$IMAGE: $((size / 1000000)) MB (docker image inspect .Size)"
echo "container-smoke: OK"
