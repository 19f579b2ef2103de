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
  _ = try library.scan()
  var changes = CatalogChanges()
  for spot in spots {
    var asset = try #require(try library.asset(atPath: folder.file(spot.name)))
    (asset.latitude, asset.longitude) = (spot.latitude, spot.longitude)
    changes.upserts.append(asset)
  }
  try library.catalog().commit(changes)
  return library
}

@Suite("The map")
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
