#!/usr/bin/python3
"""Writes the ONNX models that peers_ort.js times (one per workload and variant), with python3-onnx.

usage: /usr/bin/python3 bench/make_ort_models.py WORKLOADS.json OUT_DIR
Resize uses coordinate_transformation_mode half_pixel (linear) and nearest_mode floor for nearest (ONNX Runtime's
fastest nearest); RoiAlign uses coordinate_transformation_mode half_pixel (aligned), mode avg or max.
"""
import json
import sys

import onnx
from onnx import TensorProto, helper

OPSET = 16


def save(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.save(model, path)


def resize_model(name, in_shape, out_shape, mode, path):
    nodes = [helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode=mode,
                              coordinate_transformation_mode="half_pixel",
                              nearest_mode="floor" if mode == "nearest" else "round_prefer_floor")]
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, in_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
        [helper.make_tensor("sizes", TensorProto.INT64, [len(out_shape)], out_shape)])
    save(graph, path)


def roi_model(name, in_shape, count, side, sampling, scale, mode, path):
    nodes = [helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"], mode=mode, output_height=side,
                              output_width=side, sampling_ratio=sampling, spatial_scale=scale,
                              coordinate_transformation_mode="half_pixel")]
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, in_shape),
         helper.make_tensor_value_info("rois", TensorProto.FLOAT, [count, 4]),
         helper.make_tensor_value_info("batch", TensorProto.INT64, [count])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [count, in_shape[1], side, side])])
    save(graph, path)


def main():
    workloads = json.load(open(sys.argv[1]))
    out = sys.argv[2]
    index = []
    for w in workloads["resample"]:
        for variant, mode in (("linear", "linear"), ("nearest", "nearest")):
            path = f"{out}/{w['name'].replace('/', '_')}.{variant}.onnx"
            resize_model(w["name"], w["input"], w["output"], mode, path)
            index.append({"workload": w["name"], "variant": variant, "model": path, "input": w["input"],
                          "output": w["output"]})
    for w in workloads["upsample"]:
        out_shape = list(w["input"])
        out_shape[-1] *= w["factor"]
        out_shape[-2] *= w["factor"]
        for variant, mode in (("nearest", "nearest"), ("linear", "linear")):
            path = f"{out}/{w['name']}.{variant}.onnx"
            resize_model(w["name"], w["input"], out_shape, mode, path)
            index.append({"workload": w["name"], "variant": variant, "model": path, "input": w["input"],
                          "output": out_shape})
    for w in workloads["roi_align"]:
        for variant, mode in (("average_linear", "avg"), ("max_linear", "max")):
            path = f"{out}/{w['name']}.{variant}.onnx"
            roi_model(w["name"], w["input"], w["rois"], w["output"], w["sampling"], w["spatial_scale"], mode, path)
            index.append({"workload": w["name"], "variant": variant, "model": path, "input": w["input"],
                          "output": [w["rois"], w["input"][1], w["output"], w["output"]],
                          "rois": f"{out}/{w['name']}.rois.f32", "count": w["rois"]})
    json.dump(index, open(f"{out}/ort_models.json", "w"), indent=1)


if __name__ == "__main__":
    main()
