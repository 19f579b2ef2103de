import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// Test switches, never set in use: `DARKROOM_TEST_DECODER_FAULT=crash=MARK,hang=MARK,spin=MARK`
/// makes the renderer (in a worker, or in this process) abort, as a decoder with corrupted
/// memory does, hang (asleep), or spin (busy, as one in an endless loop: CPU time passes), on
/// a file whose name contains MARK.
struct TestFaults: Sendable {
  /// The switches of this process, read once.
  static let current = TestFaults()

  var crash: String?
  var hang: String?
  var spin: String?

  init() {
    let spec = ProcessInfo.processInfo.environment["DARKROOM_TEST_DECODER_FAULT"] ?? ""
    for part in spec.split(separator: ",") {
      let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
      guard pair.count == 2, !pair[1].isEmpty else { continue }
      if pair[0] == "crash" { crash = pair[1] }
      if pair[0] == "hang" { hang = pair[1] }
      if pair[0] == "spin" { spin = pair[1] }
    }
  }

  func apply(to name: String) {
    if let crash, name.contains(crash) { abort() }
    if let hang, name.contains(hang) {
      while true { sleep(3600) }
    }
    if let spin, name.contains(spin) {
      var x = 0.5
      while x.isFinite { x = sin(x) + 1 }
    }
  }
}
