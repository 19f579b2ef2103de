import Foundation
import Testing

@testable import Darkroom

/// `darkroom serve` as a process of its own, on a free port, stopped when the test ends.
final class ServeProcess: @unchecked Sendable {
  let process = Process()
  let port: Int
  let output: TemporaryFolder

  /// Starts the server on `library` and waits (up to a minute) for it to say where it is.
  init(_ library: String, arguments: [String] = [], environment: [String: String] = [:]) throws {
    output = try TemporaryFolder()
    let tokens = try output.write(
      "tokens", Array("write \(ServedLibrary.writeToken)\nread \(ServedLibrary.readToken)\n".utf8))
    chmod(tokens, 0o600)
    let out = output.file("stdout")
    _ = FileManager.default.createFile(atPath: out, contents: nil)
    _ = FileManager.default.createFile(atPath: output.file("stderr"), contents: nil)
    process.executableURL = URL(fileURLWithPath: CLI.binary)
    process.arguments = ["serve", library, "--port", "0", "--token-file", tokens] + arguments
    process.environment = testEnvironment.merging(environment) { $1 }
    process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
    process.standardError = try FileHandle(
      forWritingTo: URL(fileURLWithPath: output.file("stderr")))
    process.standardInput = FileHandle.nullDevice
    try process.run()
    var found: Int?
    let deadline = Date().addingTimeInterval(60)
    while found == nil, process.isRunning, Date() < deadline {
      let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
      if let range = text.range(of: "open http://127.0.0.1:") {
        found = Int(text[range.upperBound...].prefix { $0.isNumber })
      } else {
        usleep(20_000)
      }
    }
    guard let found else {
      process.terminate()
      let errors = (try? String(contentsOfFile: output.file("stderr"), encoding: .utf8)) ?? ""
      throw DarkroomError(.engine, "darkroom serve did not start: \(errors)")
    }
    port = found
  }

  var stderr: String { (try? String(contentsOfFile: output.file("stderr"), encoding: .utf8)) ?? "" }
  var stdout: String { (try? String(contentsOfFile: output.file("stdout"), encoding: .utf8)) ?? "" }

  /// Sends SIGTERM and waits for the exit status.
  func stop() -> Int32 {
    if process.isRunning {
      kill(process.processIdentifier, SIGTERM)
      process.waitUntilExit()
    }
    return process.terminationStatus
  }

  deinit {
    if process.isRunning {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }
  }

  /// A connected socket to the server, from loopback address `source` (another client).
  func connect(from source: String = "127.0.0.1") throws -> Int32 {
    try Self.connect(port: port, from: source)
  }

  /// A connected socket to `port` on loopback, from loopback address `source`.
  static func connect(port: Int, from source: String = "127.0.0.1") throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var local = sockaddr_in()
    local.sin_family = sa_family_t(AF_INET)
    local.sin_addr.s_addr = inet_addr(source)
    let bound = withUnsafePointer(to: &local) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0 else {
      close(fd)
      throw DarkroomError(.io, "cannot bind to \(source)")
    }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else {
      close(fd)
      throw DarkroomError(.io, "cannot connect to port \(port)")
    }
    return fd
  }

  /// One HTTP/1.1 request on a connection of its own; the whole response (status line,
  /// headers, body) as text, read until the server closes.
  func request(
    _ method: String, _ path: String, body: [UInt8] = [], token: String = ServedLibrary.writeToken
  )
    throws -> (status: Int, text: String)
  {
    var head = "\(method) \(path) HTTP/1.1\r\nAuthorization: Bearer \(token)\r\n"
    if !body.isEmpty { head += "Content-Type: application/json\r\n" }
    return try exchange(head, body: body)
  }

  /// One request on a connection of its own: `head` (its request line and the headers it
  /// chooses, each ending in CRLF; no token unless it has one), then `Host`, `Connection:
  /// close` and `Content-Length` are added; the status and the whole response, read until
  /// the server closes.
  func exchange(_ head: String, body: [UInt8] = [], from source: String = "127.0.0.1") throws -> (
    status: Int, text: String
  ) {
    try Self.exchange(port: port, head, body: body, from: source)
  }

  /// ``exchange(_:body:from:)`` with any server on loopback's `port`.
  static func exchange(
    port: Int, _ head: String, body: [UInt8] = [], from source: String = "127.0.0.1"
  ) throws -> (status: Int, text: String) {
    let fd = try connect(port: port, from: source)
    defer { close(fd) }
    let text =
      head + "Host: 127.0.0.1:\(port)\r\nConnection: close\r\nContent-Length: \(body.count)\r\n\r\n"
    send(fd, Array(text.utf8) + body)
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while case let n = read(fd, &buffer, buffer.count), n > 0 { response += buffer[0..<n] }
    let answer = String(decoding: response, as: UTF8.self)
    return (Int(answer.split(separator: " ").dropFirst().first ?? "") ?? 0, answer)
  }

  /// A GET's status and body bytes (the headers left out).
  func body(_ path: String, token: String = ServedLibrary.readToken) throws -> (
    status: Int, bytes: [UInt8]
  ) {
    let fd = try connect()
    defer { close(fd) }
    let head =
      "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
      + "Authorization: Bearer \(token)\r\n\r\n"
    send(fd, Array(head.utf8))
    let (status, _, bytes) = Self.readResponse(fd)
    return (status, bytes)
  }

  /// A response read from `fd` until the server closes: its status, its head (the status
  /// line and headers) and its body's bytes; (0, "", []) for one without a whole head.
  static func readResponse(_ fd: Int32) -> (status: Int, head: String, bytes: [UInt8]) {
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while case let n = read(fd, &buffer, buffer.count), n > 0 { response += buffer[0..<n] }
    let end = Array("\r\n\r\n".utf8)
    guard
      let split = (0..<max(0, response.count - 3)).first(where: {
        Array(response[$0..<$0 + 4]) == end
      })
    else { return (0, "", []) }
    let head = String(decoding: response.prefix(split), as: UTF8.self)
    let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
    return (status, head, Array(response[(split + 4)...]))
  }

  /// A response's JSON body as a dictionary (empty when it is none).
  static func json(_ text: String) -> [String: Any] {
    guard let start = text.range(of: "\r\n\r\n")?.upperBound,
      let object = try? JSONSerialization.jsonObject(with: Data(text[start...].utf8))
    else { return [:] }
    return object as? [String: Any] ?? [:]
  }

  /// A job's event stream, read raw to its end: `opened` is called once its first event
  /// (where the job is) has come, and gets the text so far; the whole text is returned.
  func jobEvents(_ job: String, opened: (String) -> Void) throws -> String {
    let fd = try connect()
    defer { close(fd) }
    send(
      fd,
      Array(
        ("GET /api/jobs/\(job)/events HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
          + "Authorization: Bearer \(ServedLibrary.readToken)\r\n\r\n").utf8))
    var stream: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    func text() -> String { String(decoding: stream, as: UTF8.self) }
    while !text().contains("event: progress"), case let n = read(fd, &buffer, buffer.count), n > 0 {
      stream += buffer[0..<n]
    }
    opened(text())
    while case let n = read(fd, &buffer, buffer.count), n > 0 { stream += buffer[0..<n] }
    return text()
  }

  func send(_ fd: Int32, _ bytes: [UInt8]) { Self.send(fd, bytes) }

  static func send(_ fd: Int32, _ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
      let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
      if n <= 0 { return }
      offset += n
    }
  }
}

/// Waits for `condition`, up to `seconds` (a bound on a wait, not a timing being tested).
func eventually(_ seconds: Double = 30, _ condition: () throws -> Bool) rethrows -> Bool {
  let deadline = Date().addingTimeInterval(seconds)
  while Date() < deadline {
    if try condition() { return true }
    usleep(20_000)
  }
  return try condition()
}

@Suite("darkroom serve: the process", .timeLimit(.minutes(10)), .offThePool)
struct ServeProcessTests {
  @Test("an upload cut off half way leaves nothing in the library")
  func interruptedUpload() throws {
    let served = try ServedLibrary(samples: ["orientation-1.jpg"])
    let server = try ServeProcess(served.root)
    let photo = try Fixture.bytes(Fixture.sample("gps.jpg"))
    let fd = try server.connect()
    let head =
      "POST /api/uploads?name=cut.jpg HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      + "Authorization: Bearer \(ServedLibrary.writeToken)\r\nContent-Length: \(photo.count)\r\n\r\n"
    server.send(fd, Array(head.utf8) + Array(photo.prefix(photo.count / 2)))
    // The server has the first half when a request on another connection is answered.
    let uploads = served.root + "/Uploads"
    #expect(
      eventually {
        ((try? FileManager.default.contentsOfDirectory(atPath: uploads)) ?? []).count == 1
      })
    close(fd)
    #expect(
      eventually { ((try? FileManager.default.contentsOfDirectory(atPath: uploads)) ?? []).isEmpty }
    )
    let list = try server.request("GET", "/api/assets")
    #expect(list.status == 200)
    #expect(list.text.contains("\"count\":1"))
    #expect(server.stop() == 0)
    // The client's fault, logged as such: a 400, not a server failure.
    #expect(server.stderr.contains("POST /api/uploads 400 "), "\(server.stderr)")
    #expect(!server.stderr.contains(" 500 "))
  }

  @Test(
    "SIGTERM stops it gracefully: the batch job under way finishes, then exit 0; after a restart the job still answers"
  )
  func gracefulStop() throws {
    let served = try ServedLibrary()
    let ids = try served.ids().map(\.rawValue)
    let server = try ServeProcess(served.root)
    let body = try JSONSerialization.data(withJSONObject: [
      "action": "apply", "filters": ["noir"], "ids": ids,
    ])
    let started = try server.request("POST", "/api/jobs", body: Array(body))
    #expect(started.status == 202)
    let job = try #require(ServeProcess.json(started.text)["id"] as? String)
    #expect(server.stop() == 0)
    for id in try served.ids() {
      #expect(try served.library.editHistory(id).current == 1, "\(id)")
    }
    #expect(server.stderr.contains("POST /api/jobs 202"))
    // A server started afterwards answers for the job, from the catalog.
    let again = try ServeProcess(served.root)
    let status = try again.request("GET", "/api/jobs/\(job)", token: ServedLibrary.readToken)
    #expect(status.status == 200)
    let record = ServeProcess.json(status.text)
    #expect(record["state"] as? String == "finished")
    #expect(record["finished"] as? Bool == true)
    #expect(record["done"] as? Int == ids.count && record["total"] as? Int == ids.count)
    #expect(record["action"] as? String == "apply")
    let resume = try again.request("POST", "/api/jobs/\(job)/resume")
    #expect(resume.status == 409)
    #expect(
      ServeProcess.json(resume.text)["error"].flatMap { $0 as? [String: Any] }?["message"]
        as? String == "the job is finished: only a stopped or interrupted one resumes")
    #expect(
      try again.request("GET", "/api/jobs/\(String(repeating: "0", count: 32))").status == 404)
    // An asset named twice is one item.
    let twice = try JSONSerialization.data(withJSONObject: [
      "action": "trash", "ids": [ids[0], ids[0]],
    ])
    let trashed = try again.request("POST", "/api/jobs", body: Array(twice))
    #expect(ServeProcess.json(trashed.text)["total"] as? Int == 1, "\(trashed.text)")
    #expect(again.stop() == 0)
  }

  @Test("requests the HTTP parser refuses get 400 with the JSON error, and the server goes on")
  func parserErrors() throws {
    let served = try ServedLibrary(samples: ["orientation-1.jpg"])
    let server = try ServeProcess(served.root)
    let requests = [
      "GARBAGE\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
      "POST /api/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 1 << 20))\r\n\r\n",
    ]
    for request in requests {
      let fd = try server.connect()
      server.send(fd, Array(request.utf8))
      var response: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 65536)
      while case let n = read(fd, &buffer, buffer.count), n > 0 { response += buffer[0..<n] }
      close(fd)
      let text = String(decoding: response, as: UTF8.self)
      #expect(text.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(request.prefix(40))")
      #expect(text.contains("\r\nContent-Type: application/json; charset=utf-8\r\n"))
      #expect(
        text.hasSuffix(
          "\r\n\r\n"
            + #"{"error":{"status":400,"kind":"http","message":"the request is not well-formed HTTP/1.1"}}"#
        ), "\(request.prefix(40))")
    }
    #expect(try server.request("GET", "/healthz").status == 200)
    #expect(server.stop() == 0)
  }

  @Test("it prints where it listens; a missing token file or library is a clear error")
  func startupLines() throws {
    let served = try ServedLibrary(samples: ["orientation-1.jpg"])
    let server = try ServeProcess(served.root)
    #expect(
      server.stdout.hasPrefix(
        "darkroom serve: \(served.root)\n  open http://127.0.0.1:\(server.port)/\n"))
    #expect(server.stop() == 0)
    let bad = try CLI.run(["serve", served.root, "--token-file", served.folder.file("none")])
    #expect(bad.status == 1)
    #expect(bad.stderr.hasPrefix("darkroom: \(served.folder.file("none")): "))
    // A token file others may read is refused, as ssh refuses such a key.
    let open = try served.folder.write("tokens", Array("write \(ServedLibrary.writeToken)\n".utf8))
    chmod(open, 0o644)
    let shared = try CLI.run(["serve", served.root, "--token-file", open])
    #expect(shared.status == 1)
    #expect(
      shared.stderr
        == "darkroom: \(open): others may read or change this token file (mode 644): make it private with chmod 600\n"
    )
    let missing = try CLI.run(["serve", served.folder.file("nowhere")])
    #expect(missing.status == 1)
    #expect(missing.stderr == "darkroom: \(served.folder.file("nowhere")): no such folder\n")
  }

  @Test("serve on a folder in no library makes it one and catalogues it, without a scan first")
  func servesAFolderWithoutCatalog() throws {
    let folder = try TemporaryFolder()
    try FileManager.default.createDirectory(
      atPath: folder.file("a"), withIntermediateDirectories: true)
    _ = try folder.write("a/photo.jpg", Fixture.bytes(Fixture.sample("gps.jpg")))
    let server = try ServeProcess(folder.path)
    #expect(
      eventually {
        (try? server.request("GET", "/api/assets").text.contains("\"path\":\"a/photo.jpg\""))
          == true
      }, "the watcher's first scan catalogues the photo")
    #expect(FileManager.default.fileExists(atPath: folder.file(".darkroom/catalog.sqlite")))
    #expect(server.stop() == 0)
  }
}
