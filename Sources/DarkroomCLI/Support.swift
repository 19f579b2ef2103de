import Darkroom
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// Thrown by a command after it has reported its failures itself; carries the exit status.
struct WorkFailed: Error {
  var status: Int32 = 1
}

/// Writes all of `bytes` to a file descriptor (standard output or error).
func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) {
  bytes.withUnsafeBytes { raw in
    guard let base = raw.baseAddress else { return }
    var done = 0
    while done < raw.count {
      let n = write(descriptor, base + done, raw.count - done)
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { return }
      done += n
    }
  }
}

/// One line on standard output, written at once (not buffered), so that whoever reads the
/// output of a command over many files sees each file as it is done, even through a pipe.
func printLine(_ text: String) {
  writeAll(STDOUT_FILENO, Array((text + "\n").utf8))
}

func printError(_ text: String) {
  writeAll(STDERR_FILENO, Array(text.utf8))
}

/// One stderr line per problem, in the form the README documents.
func reportError(_ error: Error) {
  printError("darkroom: \(commandLineText(error))\n")
}

/// A job's failed item, as one line on standard error.
func reportFailure(_ outcome: BatchOutcome) {
  if let failure = outcome.failure {
    reportError(failure)
  } else {
    printError("darkroom: \(outcome.file): \(outcome.error ?? "failed")\n")
  }
}

/// Runs `body` on each item; a failure is reported and the next item goes on. Throws
/// `WorkFailed` at the end if an item failed, or if `failed` says that something already did.
func eachReportingFailures<Item>(
  _ items: [Item], failed: Bool = false, _ body: (Item) throws -> Void
) throws {
  var failed = failed
  for item in items {
    do {
      try body(item)
    } catch {
      failed = true
      reportError(error)
    }
  }
  if failed { throw WorkFailed() }
}

/// An error as the command line says it: the engine's words, and what to type about it.
func commandLineText(_ error: Error) -> String {
  guard let error = error as? DarkroomError, let remedy = error.remedy else { return "\(error)" }
  switch remedy {
  case .allowFormat(let format): return "\(error); allow it with --allow-format \(format)"
  }
}

/// Encodes a value as key-sorted JSON (pretty unless asked otherwise), for `--json` output.
func jsonText<T: Encodable>(_ value: T, pretty: Bool = true) throws -> String {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
  if pretty { encoder.outputFormatting.insert(.prettyPrinted) }
  return String(decoding: try encoder.encode(value), as: UTF8.self)
}

/// `value` with exactly `digits` decimals, as `%.Nf` prints it.
func fixed(_ value: Double, _ digits: Int) -> String {
  var scale = 1.0
  for _ in 0..<digits { scale *= 10 }
  let rounded = (abs(value) * scale).rounded()
  let whole = Int(rounded / scale)
  var fraction = String(Int(rounded - Double(whole) * scale))
  while fraction.count < digits { fraction = "0" + fraction }
  let sign = value < 0 && rounded != 0 ? "-" : ""
  return digits == 0 ? "\(sign)\(whole)" : "\(sign)\(whole).\(fraction)"
}

/// Standard input, read whole with a bound: an image piped in must fit in memory.
enum StandardInput {
  static let limit = 1 << 30

  static func readAll() throws -> [UInt8] {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    while true {
      let n = chunk.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
      if n < 0 && errno == EINTR { continue }
      if n < 0 {
        throw DarkroomError(
          .io, file: "-", "cannot read standard input: \(String(cString: strerror(errno)))")
      }
      if n == 0 { break }
      bytes += chunk[0..<n]
      guard bytes.count <= limit else {
        throw DarkroomError(
          .tooLarge, file: "-", "standard input is larger than \(limit >> 20) MiB")
      }
    }
    guard !bytes.isEmpty else { throw DarkroomError(.empty, file: "-", "standard input is empty") }
    return bytes
  }
}

func isFolder(_ path: String) -> Bool {
  var folder = false
  return FileManager.default.fileExists(atPath: path, isDirectory: &folder) && folder
}

func sameFile(_ a: String, _ b: String) -> Bool {
  var sa = stat()
  var sb = stat()
  guard stat(a, &sa) == 0, stat(b, &sb) == 0 else { return false }
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
}

extension EncodeProgress {
  /// One line for a terminal: "clip.mov: 1.3 s of 2.0 s (65%)".
  var line: String {
    "\(file): \(tenths.done) s of \(tenths.total) s (\(Int(100 * fraction))%)"
  }
}

/// A command's discussion as prose that the help wraps at any width: the lines of each
/// paragraph, broken in the source to keep it readable, are joined, so that the help does
/// not break them again mid-paragraph at a narrower terminal. Lines kept as they are: those
/// that start with a space (examples, tables) or with `- ` (a list), that hold a run of
/// three spaces (columns), or that end with a colon (a heading: "Examples:").
func prose(_ text: String) -> String {
  var out: [String] = []
  var joining = false
  for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
    let verbatim =
      line.first == " " || line.hasPrefix("- ") || line.contains("   ") || line.hasSuffix(":")
    if line.isEmpty || verbatim {
      out.append(line)
      joining = false
    } else if joining, let last = out.popLast() {
      out.append(last + " " + line)
    } else {
      out.append(line)
      joining = true
    }
  }
  return out.joined(separator: "\n")
}
