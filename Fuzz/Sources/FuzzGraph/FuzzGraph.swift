// Filter graphs, adjustment data and --filter specs from arbitrary bytes: every input must
// give a value or a DarkroomError, never a crash, a hang or a sanitizer report.
import CFuzzDriver
import Darkroom

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGraph(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  if let graph = try? FilterGraph.decode(json: bytes, source: "fuzz") {
    // A graph that parses must serialise and parse back to itself.
    let again = try? FilterGraph.decode(json: graph.canonicalJSON, source: "fuzz-again")
    precondition(again?.nodes == graph.nodes, "graph nodes do not round-trip")
  }
  if let data = try? AdjustmentData.decode(json: bytes, source: "fuzz") {
    precondition((try? AdjustmentData.decode(json: data.canonicalJSON, source: "again")) == data)
  }
  let text = String(decoding: bytes, as: UTF8.self)
  if !text.contains("/") && !text.contains(".json") {
    _ = try? FilterGraph.parse(spec: text)
  }
  return 0
}

@_cdecl("FuzzGraph_main")
public func fuzzGraphMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  var count = argc
  var arguments = argv
  return LLVMFuzzerRunDriver(&count, &arguments) { data, size in
    guard let data else { return 0 }
    return fuzzGraph(data, size)
  }
}
