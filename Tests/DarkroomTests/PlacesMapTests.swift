import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Darkroom
@testable import DarkroomServer

/// Photos at places, by setting what the scan would read from their GPS positions.
func placed(
  _ spots: [(name: String, latitude: Double, longitude: Double)], in folder: TemporaryFolder
) throws -> Library {
  try filesDated(spots.map { ($0.name, noon(2020, 1, 1)) }, in: folder)
  let library = try Library.create(at: folder.path)
  _ = try library.scanBlocking()
  var changes = CatalogChanges()
  for spot in spots {
    var asset = try #require(try library.asset(atPath: folder.file(spot.name)))
    (asset.latitude, asset.longitude) = (spot.latitude, spot.longitude)
    changes.upserts.append(asset)
  }
  try library.catalog().commit(changes)
  return library
}

@Suite("The map", .offThePool)
struct MapTests {
  static let spots: [(name: String, latitude: Double, longitude: Double)] = [
    ("boulder-1.jpg", 40.015, -105.27), ("boulder-2.jpg", 40.02, -105.28),
    ("kyoto.jpg", 35.01, 135.77), ("fiji.jpg", -17.7, 179.9), ("samoa.jpg", -13.8, -172.1),
  ]

  @Test(
    "the photos with positions gather into clusters by the cells of a zoom: Boulder's two as one at a world's zoom, apart at a street's; a box across the antimeridian; the API checks its numbers"
  )
  func clusters() async throws {
    let folder = try Fixture.temporaryFolder()
    let library = try placed(Self.spots, in: folder)
    let world = try library.mapClusters(zoom: 2, south: -90, west: -180, north: 90, east: 180)
    #expect(world.map(\.count).sorted() == [1, 1, 1, 2])
    let boulder = try #require(world.first { $0.count == 2 })
    #expect(abs(boulder.latitude - 40.0175) < 1e-9 && abs(boulder.longitude + 105.275) < 1e-9)
    let boulders = try ["boulder-1.jpg", "boulder-2.jpg"].map {
      try library.asset(atPath: folder.file($0))?.id
    }
    #expect(boulder.poster != nil && boulders.contains(boulder.poster))
    let street = try library.mapClusters(zoom: 16, south: 39, west: -106, north: 41, east: -104)
    #expect(street.map(\.count) == [1, 1])
    // From Fiji (179.9) east across the antimeridian to Samoa (-172.1): those two only.
    let pacific = try library.mapClusters(zoom: 4, south: -30, west: 170, north: 0, east: -160)
    #expect(pacific.map(\.count) == [1, 1])
    let served = ServedLibrary(over: library, in: folder)
    try await served.test { client, _ in
      let map = try await client.execute(
        uri: "/api/map?zoom=2", method: .get, headers: ServedLibrary.read)
      let clusters = try #require(map.object["clusters"] as? [[String: Any]])
      #expect(clusters.compactMap { $0["count"] as? Int }.sorted() == [1, 1, 1, 2])
      #expect(clusters.allSatisfy { ($0["version"] as? String)?.count == 12 })
      for bad in ["zoom=23", "zoom=0.5", "south=-91", "west=abc"] {
        let refused = try await client.execute(
          uri: "/api/map?" + bad, method: .get, headers: ServedLibrary.read)
        #expect(refused.status == .badRequest, "\(bad)")
      }
      let upsideDown = try await client.execute(
        uri: "/api/map?south=10&north=0", method: .get, headers: ServedLibrary.read)
      #expect(
        upsideDown.status == .ok && upsideDown.text == "{\"clusters\":[]}", "\(upsideDown.text)")
      // Without --map-tiles: no map, and the page says why.
      let page = try await client.execute(uri: "/map", method: .get, headers: ServedLibrary.read)
      #expect(page.text.contains("No map: it needs a tile server"))
      #expect(!page.text.contains("leaflet"))
      let script = try await client.execute(
        uri: "/static/leaflet.js", method: .get, headers: ServedLibrary.read)
      #expect(script.status == .notFound)
    }
  }
}

/// A tile server on a free port of its own (a second origin, as a real one is): every path
/// answers with one PNG, and is written down in `requests`. Its output goes to files, never
/// to a pipe nobody reads (a server that logs each request to a full pipe stops answering).
final class TileServer: @unchecked Sendable {
  let process = Process()
  let folder: TemporaryFolder
  let port: Int

  init(tile: [UInt8]) throws {
    folder = try TemporaryFolder()
    _ = try folder.write("tile.png", tile)
    _ = FileManager.default.createFile(atPath: folder.file("port"), contents: nil)
    let script = """
      import http.server, os, sys
      folder = sys.argv[1]
      tile = open(os.path.join(folder, "tile.png"), "rb").read()
      class Tiles(http.server.BaseHTTPRequestHandler):
          def do_GET(self):
              with open(os.path.join(folder, "requests"), "a") as log:
                  log.write(self.path + "\\n")
              self.send_response(200)
              self.send_header("Content-Type", "image/png")
              self.send_header("Content-Length", str(len(tile)))
              self.end_headers()
              self.wfile.write(tile)
          def log_message(self, *arguments):
              pass
      server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Tiles)
      with open(os.path.join(folder, "port"), "w") as out:
          out.write(str(server.server_address[1]))
      server.serve_forever()
      """
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = ["-c", script, folder.path]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    try process.run()
    var found: Int?
    let deadline = Date().addingTimeInterval(30)
    while found == nil, process.isRunning, Date() < deadline {
      found = Int((try? String(contentsOfFile: folder.file("port"), encoding: .utf8)) ?? "")
      if found == nil { usleep(20_000) }
    }
    guard let found else {
      process.terminate()
      throw DarkroomError(.engine, "the tile server did not start")
    }
    port = found
  }

  /// The paths asked for, in order.
  var requests: [String] {
    ((try? String(contentsOfFile: folder.file("requests"), encoding: .utf8)) ?? "")
      .split(separator: "\n").map(String.init)
  }

  deinit {
    if process.isRunning {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }
  }
}

@Suite("The map, in chromium", .serialized, .timeLimit(.minutes(5)), .offThePool)
struct MapBrowserTests {
  @Test(
    "the map draws the tile server's tiles and the photos as clusters with their counts and posters; a photo's marker opens it; no console error"
  )
  func map() throws {
    let folder = try Fixture.temporaryFolder()
    let library = try placed(MapTests.spots, in: folder)
    let tiles = try TileServer(tile: try Fixture.bytes(Fixture.sample("alpha.png")))
    let server = try ServeProcess(
      folder.path,
      arguments: [
        "--rate-limit", "0", "--map-tiles", "http://127.0.0.1:\(tiles.port)/{z}/{x}/{y}.png",
        "--map-attribution", "Test tiles",
      ])
    defer { _ = server.stop() }
    let (browser, base) = try Browser.loggedIn(to: server)
    try browser.go(base + "/map")
    // The five photos, fitted: Boulder's two as one cluster, the others alone.
    let counts = """
      return Array.from(document.querySelectorAll('.map-cluster .n')).map((n) => Number(n.textContent)).sort();
      """
    #expect(
      eventually { (try? browser.run(counts)) as? [Int] == [1, 1, 1, 2] },
      "\(String(describing: try? browser.run(counts)))")
    #expect(
      eventually {
        (try? browser.run("return document.querySelector('.map-status').textContent"))
          as? String == "5 photos here"
      })
    // Tiles from the tile server (allowed by the page's policy), and the clusters' posters
    // from Darkroom, all decoded.
    let loaded = """
      const tiles = Array.from(document.querySelectorAll('img.leaflet-tile'));
      const posters = Array.from(document.querySelectorAll('.map-cluster img'));
      return [tiles.filter((i) => i.complete && i.naturalWidth > 0).length, tiles.length,
        posters.filter((i) => i.complete && i.naturalWidth > 0).length, posters.length];
      """
    #expect(
      eventually {
        guard let n = (try? browser.run(loaded)) as? [Int], n.count == 4 else { return false }
        return n[0] > 0 && n[0] == n[1] && n[2] == 4 && n[3] == 4
      }, "\(String(describing: try? browser.run(loaded)))")
    #expect(tiles.requests.contains { $0.hasSuffix(".png") && $0.split(separator: "/").count == 3 })
    #expect(
      try browser.run("return document.querySelector('.leaflet-control-attribution').textContent")
        as? String == "Leaflet | Test tiles")
    try browser.screenshot("map-desktop")
    try browser.resize(390, 844)
    try browser.screenshot("map-phone")
    try browser.resize(1280, 900)
    // Kyoto's marker (one photo) opens its page.
    let kyoto = try #require(try library.asset(atPath: folder.file("kyoto.jpg"))).id
    // Found and clicked in one step of the page's own (the resize redraws the markers: an
    // element found in one call may be gone by the next).
    let marker = ".leaflet-marker-icon[title='1 photo'] img[src*='\(kyoto)']"
    #expect(
      eventually {
        (try? browser.run(
          "const m = document.querySelector(\"\(marker)\"); if (!m) return false; m.click(); return true;"
        )) as? Bool == true
      })
    #expect(eventually { browser.url.hasPrefix(base + "/asset/\(kyoto)") }, "\(browser.url)")
    #expect(try browser.consoleErrors() == [])
  }
}
