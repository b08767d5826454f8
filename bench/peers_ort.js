// ONNX Runtime (onnxruntime-node, CPU execution provider) timings of the models make_ort_models.py wrote.
// usage: node bench/peers_ort.js OUT_DIR [--quick]   (run by bench/run.sh; one JSON line per measurement)
const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));

const quick = process.argv.includes('--quick');
const outDir = process.argv[2];

// Median seconds of fn(rep), rep = 1, 2, ... (fn(0) warms up).
async function medianSeconds(fn) {
  await fn(0);
  const times = [];
  let total = 0;
  const [budget, minReps] = quick ? [0.1, 3] : [0.4, 5];
  while (times.length < minReps || (total < budget && times.length < 60)) {
    const t0 = process.hrtime.bigint();
    await fn(times.length + 1);
    const dt = Number(process.hrtime.bigint() - t0) / 1e9;
    times.push(dt);
    total += dt;
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

function randomTensor(shape) {
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = Math.random();
  return new ort.Tensor('float32', data, shape);
}

// As many inputs as rsz_bench uses for the workload (its Buffers: 256 MiB of float32 input + output sets, 1 to 8),
// taken in turn by the repetitions, so that every library reads its input from the same level of the memory
// hierarchy.
function inputs(entry) {
  const elements = (shape) => shape.reduce((a, b) => a * b, 1);
  const setBytes = (elements(entry.input) + elements(entry.output)) * 4;
  const count = Math.min(8, Math.max(1, Math.floor((256 * 2 ** 20) / Math.max(setBytes, 1))));
  return Array.from({ length: count }, () => randomTensor(entry.input));
}

async function main() {
  const index = JSON.parse(fs.readFileSync(path.join(outDir, 'ort_models.json'), 'utf8'));
  for (const threads of [1, 2]) {
    for (const entry of index) {
      const session = await ort.InferenceSession.create(entry.model, {
        intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all',
      });
      const xs = inputs(entry);
      const feeds = {};
      if (entry.rois) {
        // A Buffer may be a view into a larger pooled ArrayBuffer: copy exactly its bytes.
        const bytes = fs.readFileSync(entry.rois);
        const boxes = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
        feeds.rois = new ort.Tensor('float32', boxes, [entry.count, 4]);
        feeds.batch = new ort.Tensor('int64', new BigInt64Array(entry.count), [entry.count]);
      }
      const seconds = await medianSeconds((rep) => session.run({ ...feeds, x: xs[rep % xs.length] }));
      console.log(JSON.stringify({
        workload: entry.workload, variant: entry.variant, dtype: 'float32', threads, impl: 'onnxruntime',
        median_ms: seconds * 1e3,
      }));
    }
  }
}

main().catch((error) => { console.error(`peers_ort: ${error.message}`); process.exit(1); });
