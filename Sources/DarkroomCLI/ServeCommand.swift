import ArgumentParser
import Darkroom
import DarkroomServer
import Dispatch
import FoundationEssentials
import Logging

#if canImport(Glibc)
  import Glibc
#endif

struct ServeCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "serve",
    abstract: "Serve a library over HTTP: a JSON API and a web gallery.",
    usage: "darkroom serve [<dir>] [--port <port>] [--token-file <file>] [<options>]",
    discussion: prose(
      """
      The gallery is at / (albums, thumbnails, a viewer and editor, upload), the
      API at /api (docs/openapi.yaml describes it), metrics at /metrics.

      Access needs a token: --token-file names a file of lines `read TOKEN` or
      `write TOKEN`. Without one, a write token is made and printed at start.
      Scripts send `Authorization: Bearer TOKEN`; the gallery logs in with it.

      --spaces DIR serves a folder of encrypted spaces (darkroom space create) at
      /space: a logged-in session unlocks one with its password. The key stays
      in memory for that session only, and is dropped on Lock, on logout, after
      --space-idle minutes without use and when the server stops.

      It listens on loopback; --host 0.0.0.0 opens it to your network (TLS is
      a reverse proxy's job: see docs/server.md). Ctrl-C or SIGTERM stops it after
      the requests and batch jobs under way.

      Examples:
        darkroom serve ~/Pictures    # in no library yet: catalogued while served
        darkroom serve ~/Pictures --host 0.0.0.0 --token-file ~/.darkroom-tokens
      """))

  @OptionGroup var place: LibraryFolder

  /// The library's folder as named (nil: the one containing the current folder).
  var directory: String? { place.folder ?? place.option }

  @Option(help: "The address to listen on.")
  var host = "127.0.0.1"

  @Option(help: "The port (0: any free one).")
  var port = 8080

  @Option(help: ArgumentHelp("Tokens: lines of `read TOKEN` or `write TOKEN`.", valueName: "file"))
  var tokenFile: String?

  @Option(help: ArgumentHelp("Requests a second per client (0: no limit).", valueName: "n"))
  var rateLimit = 200.0

  @Option(
    help: ArgumentHelp(
      "Connections one address may hold (0: no limit).",
      discussion:
        "Past it a new connection is closed at once. Behind nginx every request comes from its address: raise it or set 0 there.",
      valueName: "n"))
  var maxConnectionsPerClient = 128

  @Option(
    help: ArgumentHelp(
      "Connections in all; past it, 503 (0: as the open files allow).", valueName: "n"))
  var maxConnections = 4096

  @Option(
    help: ArgumentHelp(
      "Close a connection idle, or a request head unfinished, this long.", valueName: "seconds"))
  var idleTimeout = 30

  @Option(help: ArgumentHelp("Cold renders that may wait before 503.", valueName: "n"))
  var renderQueue = 64

  @Option(help: ArgumentHelp("Largest upload, in bytes.", valueName: "bytes"))
  var maxUploadBytes: Int64 = 200 << 20

  @Option(help: ArgumentHelp("A folder of encrypted spaces to serve at /space.", valueName: "dir"))
  var spaces: String?

  @Option(help: ArgumentHelp("Lock an unlocked space after this idle time.", valueName: "minutes"))
  var spaceIdle = 15

  @Option(help: "trace, debug, info (a line per request), warning or error.")
  var logLevel = "info"

  @Flag(help: "Decode in this process instead of worker processes.")
  var noWorkers = false

  @Flag(
    help:
      "Make no thumbnails in the background (made by default, newest first, while no request renders; also DARKROOM_NO_BACKGROUND=1)."
  )
  var noBackground = false

  @Option(
    help: ArgumentHelp(
      "nginx's internal location for the rendition cache: cached renditions are sent by nginx (X-Accel-Redirect; docs/server.md).",
      valueName: "path"))
  var accelRedirect: String?

  @Flag(
    help: ArgumentHelp(
      "Hand out signed rendition addresses that need no login (docs/server.md).",
      discussion:
        "The listings' thumbnails and fullscreen images carry an HMAC under the library's .darkroom/signing.key, so that nginx or a CDN can check them and serve its copy without asking darkroom."
    ))
  var signedRenditions = false

  @Option(
    help: ArgumentHelp(
      "How long a signed address lives at least (rounded up to the hour).", valueName: "hours"))
  var signedLifetime = 24

  @Option(
    help: ArgumentHelp(
      "A tile server for the gallery's map, {z}/{x}/{y} in its URL (no map without one), such as https://tile.openstreetmap.org/{z}/{x}/{y}.png.",
      valueName: "url"))
  var mapTiles: String?

  @Option(
    help: ArgumentHelp(
      "The credit the tile server's terms ask for, shown on the map (OpenStreetMap's by default for its tiles).",
      valueName: "text"))
  var mapAttribution: String?

  @OptionGroup var limits: LimitOptions

  func validate() throws {
    if let mapTiles, !ServerConfiguration.isTileURL(mapTiles) {
      throw ValidationError(
        "--map-tiles takes an http(s) URL with {z}, {x} and {y}, such as https://tile.openstreetmap.org/{z}/{x}/{y}.png"
      )
    }
    guard (0...65535).contains(port) else { throw ValidationError("--port takes 0 to 65535") }
    if let accelRedirect,
      !accelRedirect.hasPrefix("/") || !accelRedirect.hasSuffix("/")
        || accelRedirect.contains("..") || accelRedirect.contains(where: \.isWhitespace)
    {
      throw ValidationError(
        "--accel-redirect takes an nginx location path that starts and ends with /, such as /_darkroom_cache/"
      )
    }
    guard (1...8760).contains(signedLifetime) else {
      throw ValidationError("--signed-lifetime takes 1 to 8760 hours")
    }
    guard rateLimit >= 0 else { throw ValidationError("--rate-limit takes 0 or more") }
    guard (1...1440).contains(spaceIdle) else {
      throw ValidationError("--space-idle takes 1 to 1440 minutes")
    }
    guard maxConnectionsPerClient >= 0, maxConnections >= 0 else {
      throw ValidationError("--max-connections and --max-connections-per-client take 0 or more")
    }
    guard (1...3600).contains(idleTimeout) else {
      throw ValidationError("--idle-timeout takes 1 to 3600 seconds")
    }
    guard Logger.Level(rawValue: logLevel) != nil else {
      throw ValidationError("--log-level takes trace, debug, info, notice, warning or error")
    }
  }

  func run() throws {
    var logger = Logger(label: "darkroom")
    logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
    var library = try Self.library(at: directory ?? ".")
    library.logger = logger  // the engine's jobs, sweeps and failed catalog writes too
    var configuration = ServerConfiguration()
    configuration.host = host
    configuration.port = port
    configuration.rateLimit = rateLimit
    configuration.rateBurst = max(rateLimit * 2, 1)
    configuration.renderQueueBound = renderQueue
    configuration.maxConnectionsPerClient = maxConnectionsPerClient
    configuration.maxConnections = maxConnections
    configuration.idleTimeout = .seconds(idleTimeout)
    configuration.uploadLimits.maxBytes = maxUploadBytes
    if let spaces {
      // Refused now, not at the first unlock: a folder without a header is no folder of spaces.
      guard FileManager.default.fileExists(atPath: spaces + "/header") else {
        throw DarkroomError(
          .notFound, file: spaces, "is not a folder of spaces: darkroom space create makes one")
      }
      configuration.spaces = spaces
    }
    configuration.spaceIdle = .seconds(spaceIdle * 60)
    configuration.backgroundThumbnails = !noBackground && !Library.backgroundTurnedOff
    configuration.accelRedirect = accelRedirect
    configuration.signedRenditions = signedRenditions ? signedLifetime * 3600 : nil
    configuration.mapTiles = mapTiles
    configuration.mapAttribution =
      mapAttribution
      ?? (mapTiles?.contains("openstreetmap.org") == true
        ? "© OpenStreetMap contributors" : nil)
    configuration.uploadLimits.maxPixels = limits.maxPixels
    var pixels = limits.settings()
    if !noWorkers {
      // Uploads, scans and the watcher read every file's header in the same workers.
      Containment.useThisProgram(
        for: .everyFile, idle: configuration.renderSlots, timeLimit: pixels.timeLimit)
      pixels.workers = Containment.startWorkers()
    }
    configuration.pixels = pixels
    var newToken: String?
    if let tokenFile {
      configuration.tokens = try Tokens(file: tokenFile)
    } else {
      let token = Tokens.random()
      configuration.tokens.add(token, .write)
      newToken = token
    }
    // What a killed server or command left (a cut-off upload, an edit never renamed) goes.
    library.sweepTemporaries()
    let server = try DarkroomServer(library: library, configuration: configuration)
    let (host, root, madeToken, spaces) = (host, library.root.path, newToken, spaces)
    let application = server.application(logger: logger) { port in
      var lines = ["darkroom serve: \(root)"]
      let addresses = host == "0.0.0.0" ? NetworkAddresses.local() : [host]
      for address in addresses { lines.append("  open http://\(address):\(port)/") }
      if let madeToken { lines.append("  write token (log in with it): \(madeToken)") }
      if spaces != nil { lines.append("  encrypted spaces: unlock one at /space") }
      printLine(lines.joined(separator: "\n"))
    }
    let done = DispatchSemaphore(value: 0)
    let failure = FailureBox()
    Task {
      do {
        try await application.runService()
      } catch {
        failure.set(error)
      }
      done.signal()
    }
    done.wait()
    pixels.workers?.shutDown()
    if let error = failure.error { throw error }
  }
}

extension ServeCommand {
  /// The library `folder` is in, with its catalog open; a folder in no library becomes one,
  /// with an empty catalog that the server's watcher fills with its first scan (and keeps
  /// current).
  static func library(at folder: String) throws -> Library {
    var isFolder = false
    guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder else {
      throw DarkroomError(.notFound, file: folder, "no such folder")
    }
    let library = try Library.containing(folder) ?? Library.create(at: folder)
    // Opened here, so that a catalog that cannot be (a server that is down, another
    // library's) stops the start with why, not every request after it.
    _ = try library.catalog()
    return library
  }
}

/// The error the server's task ended with, read once it has ended.
private final class FailureBox: @unchecked Sendable {
  private(set) var error: (any Error)?
  func set(_ error: any Error) { self.error = error }
}

/// This machine's IPv4 addresses other than loopback: where a phone on the LAN reaches it.
enum NetworkAddresses {
  static func local() -> [String] {
    var first: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&first) == 0, let list = first else { return ["0.0.0.0"] }
    defer { freeifaddrs(list) }
    var addresses: [String] = []
    var item: UnsafeMutablePointer<ifaddrs>? = list
    while let current = item {
      defer { item = current.pointee.ifa_next }
      guard let address = current.pointee.ifa_addr, address.pointee.sa_family == UInt16(AF_INET)
      else { continue }
      var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
      if getnameinfo(
        address, socklen_t(MemoryLayout<sockaddr_in>.size), &host, socklen_t(host.count), nil, 0,
        NI_NUMERICHOST) == 0
      {
        let text = String(
          decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if !text.hasPrefix("127.") { addresses.append(text) }
      }
    }
    return addresses.isEmpty ? ["0.0.0.0"] : addresses
  }
}
