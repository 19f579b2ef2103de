// darkroom-bench: renders a filter graph on one file through the Swift API, with no library,
// original store or adjustment data, so Benchmarks/edit.sh can show what those cost.
// Usage: DarkroomBench INPUT OUTPUT SPEC...
import Darkroom

#if canImport(Glibc)
  import Glibc
#endif

func fail(_ message: String, _ status: Int32) -> Never {
  let bytes = Array((message + "\n").utf8)
  _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
  exit(status)
}

let arguments = CommandLine.arguments
guard arguments.count >= 4 else {
  fail("usage: DarkroomBench INPUT OUTPUT SPEC...", 2)
}
do {
  let bytes = try Editor().preview(
    .file(arguments[1]), graph: FilterGraph.parse(specs: Array(arguments[3...])))
  try AtomicFile.write(bytes, to: arguments[2])
} catch {
  fail("DarkroomBench: \(error)", 1)
}
