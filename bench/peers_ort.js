// ONNX Runtime (onnxruntime-node, CPU execution provider) timings of the models make_ort_models.py wrote.
// usage: node bench/peers_ort.js OUT_DIR [--quick]   (run by bench/run.sh; one JSON line per measurement)
const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));

const quick = process.argv.includes('--quick');
const outDir = process.argv[2];

async function medianSeconds(fn) {
  await fn();
  const times = [];
  let total = 0;
  const [budget, minReps] = quick ? [0.1, 3] : [0.4, 5];
  while (times.length < minReps || (total < budget && times.length < 60)) {
    const t0 = process.hrtime.bigint();
    await fn();
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

async function main() {
  const index = JSON.parse(fs.readFileSync(path.join(outDir, 'ort_models.json'), 'utf8'));
  for (const threads of [1, 2]) {
    for (const entry of index) {
      const session = await ort.InferenceSession.create(entry.model, {
        intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all',
      });
      const feeds = { x: randomTensor(entry.input) };
      if (entry.rois) {
        // A Buffer may be a view into a larger pooled ArrayBuffer: copy exactly its bytes.
        const bytes = fs.readFileSync(entry.rois);
        const boxes = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
        feeds.rois = new ort.Tensor('float32', boxes, [entry.count, 4]);
        feeds.batch = new ort.Tensor('int64', new BigInt64Array(entry.count), [entry.count]);
      }
      const seconds = await medianSeconds(() => session.run(feeds));
      console.log(JSON.stringify({
        workload: entry.workload, variant: entry.variant, dtype: 'float32', threads, impl: 'onnxruntime',
        median_ms: seconds * 1e3,
      }));
    }
  }
}

main().catch((error) => { console.error(`peers_ort: ${error.message}`); process.exit(1); });
