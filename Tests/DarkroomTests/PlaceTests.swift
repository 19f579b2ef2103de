import Foundation
import Hummingbird
import Testing

@testable import Darkroom

/// Places and time zones from GPS positions, offline: the data `Scripts/install-geodata.sh`
/// builds (CI runs it first; a machine without it fails here, saying so).
@Suite("Metadata: places and time zones", .timeLimit(.minutes(5)), .offThePool)
struct PlaceTests {
  private func geo() throws -> GeoData {
    try #require(
      GeoData.shared,
      "no places.bin or zones.bin in \(GeoData.searched): run Scripts/install-geodata.sh")
  }

  /// A fixed generator: the same positions every run.
  private struct Random {
    var state: UInt64
    mutating func next() -> Double {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Double(state >> 11) / Double(1 << 53)
    }
  }

  @Test("the nearest place agrees with a search of every place, at 300 populated positions")
  func nearestPlace() throws {
    let places = try #require(try geo().places, "no places.bin")
    #expect(places.count > 100_000, "GeoNames' cities1000 has some 140,000 places")
    var random = Random(state: 20_261_125)
    var checked = 0
    for _ in 0..<300 {
      // Near a real place (within about 50 km), as photos are.
      let anchor = places.place(Int(random.next() * Double(places.count)))
      let latitude = max(-90, min(90, anchor.latitude + (random.next() - 0.5)))
      var longitude = anchor.longitude + (random.next() - 0.5)
      if longitude > 180 { longitude -= 360 }
      if longitude < -180 { longitude += 360 }
      let found = places.nearestRecord(latitude: latitude, longitude: longitude)
      let every = places.nearestByEveryRecord(latitude: latitude, longitude: longitude)
      #expect(found == every, "\(latitude), \(longitude)")
      checked += found == nil ? 0 : 1
    }
    #expect(checked == 300)
    for (latitude, longitude, expected) in [
      (39.7392, -104.9903, "Denver, Colorado, United States"),
      // GeoNames lists a city's districts too: the centre of Berlin is Mitte.
      (52.5200, 13.4050, "Mitte, Berlin, Germany"),
      (41.2565, -95.9345, "Omaha, Nebraska, United States"),
      (-33.8688, 151.2093, "Sydney, New South Wales, Australia"),
    ] {
      #expect(
        places.nearest(latitude: latitude, longitude: longitude)?.description == expected)
    }
    #expect(places.nearest(latitude: 91, longitude: 0) == nil)
  }

  @Test("the zone at 1,000 random land positions agrees with timezonefinder's at least 99%")
  func zones() throws {
    let geo = try geo()
    let zones = try #require(geo.zones, "no zones.bin")
    let check = try String(contentsOfFile: geo.folder + "/zones-check.tsv", encoding: .utf8)
    var (agree, total) = (0, 0)
    var differ: [String] = []
    for line in check.split(separator: "\n") {
      let fields = line.split(separator: "\t").map(String.init)
      guard fields.count == 3, let latitude = Double(fields[0]), let longitude = Double(fields[1])
      else { continue }
      total += 1
      let found = zones.zone(latitude: latitude, longitude: longitude)
      if found == fields[2] { agree += 1 } else { differ.append("\(line): \(found ?? "none")") }
    }
    #expect(total == 1000)
    #expect(Double(agree) >= 0.99 * Double(total), "\(differ.prefix(20))")
    for (latitude, longitude, zone) in [
      (39.7392, -104.9903, "America/Denver"), (41.2565, -95.9345, "America/Chicago"),
      (52.52, 13.405, "Europe/Berlin"), (-22.95, -43.21, "America/Sao_Paulo"),
      (27.7172, 85.324, "Asia/Kathmandu"),
    ] {
      #expect(zones.zone(latitude: latitude, longitude: longitude) == zone)
    }
    #expect(zones.zone(latitude: 0, longitude: -200) == nil)
  }

  @Test("a zone's offset for a local clock time: summer, winter, the gap and the overlap")
  func offsets() throws {
    let chicago = try #require(ZoneRules.named("America/Chicago"))
    func local(_ text: String) throws -> Int64 {
      Int64(try #require(CaptureDate(iso8601: text)).secondsSince1970)
    }
    #expect(chicago.offset(forLocal: try local("2024-07-01T12:00:00")) == -5 * 3600)
    #expect(chicago.offset(forLocal: try local("2024-01-15T12:00:00")) == -6 * 3600)
    // 2024-03-10 02:30 never happened in Chicago: the offset before the gap.
    #expect(chicago.offset(forLocal: try local("2024-03-10T02:30:00")) == -6 * 3600)
    // 2024-11-03 01:30 happened twice: the earlier (daylight time).
    #expect(chicago.offset(forLocal: try local("2024-11-03T01:30:00")) == -5 * 3600)
    #expect(
      try #require(ZoneRules.named("Asia/Kathmandu")).offset(
        forLocal: try local("2024-01-01T00:00:00")) == 345 * 60)
    for hostile in ["../../etc/passwd", "/etc/passwd", "", "America/Nowhere", "a\u{0}b"] {
      #expect(ZoneRules.named(hostile) == nil, "\(hostile)")
    }
  }

  @Test(
    "a photo with GPS and no offset: its zone's offset, its place, in info, scan, list and the API")
  func photo() async throws {
    _ = try geo()
    let folder = try TemporaryFolder()
    let path = folder.file("omaha.jpg")
    try FileManager.default.copyItem(atPath: Fixture.sample("gps.jpg"), toPath: path)
    let run = try CLI.run(
      [
        "-q", "-overwrite_original", "-OffsetTimeOriginal=", "-GPSLatitude=41.2565",
        "-GPSLatitudeRef=N", "-GPSLongitude=95.9345", "-GPSLongitudeRef=W", path,
      ], executable: "/usr/bin/exiftool")
    #expect(run.status == 0, "\(run.stderr)")
    let metadata = try AssetMetadata.read(path: path)
    // 2023-12-31 23:59:58.25 in Omaha, in winter: UTC-6.
    #expect(metadata.captureDate?.iso8601 == "2023-12-31T23:59:58.250-06:00")
    #expect(metadata.captureDate?.instant == "2024-01-01T05:59:58.250Z")
    #expect(metadata.timeZone == "America/Chicago")
    #expect(metadata.sources["utcOffset"] == "GPS time zone")
    #expect(metadata.place?.description == "Omaha, Nebraska, United States")
    let info = try CLI.run(["info", "--json", path])
    let object = try #require(
      (try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [[String: Any]])?.first)
    #expect(object["timeZone"] as? String == "America/Chicago")
    #expect(object["localDateTime"] as? String == "2023-12-31T23:59:58.250")
    #expect(object["captureInstant"] as? String == "2024-01-01T05:59:58.250Z")
    #expect((object["place"] as? [String: Any])?["region"] as? String == "Nebraska")

    let library = try Library.create(at: folder.path)
    #expect(try await library.scan().added == 1)
    let asset = try #require(try library.asset(atPath: path))
    #expect(asset.timeZone == "America/Chicago" && asset.place == "Omaha")
    #expect(asset.region == "Nebraska" && asset.country == "United States")
    #expect(asset.sortDate == 1_704_088_798.25)
    #expect(asset.captureOffsetMinutes == -360)
    let listed = try CLI.run(["list", "--place", "nebraska"], cwd: folder.path)
    #expect(listed.stdout == "omaha.jpg\n", "\(listed.stderr)")
    let none = try CLI.run(["list", "--place", "nebr"], cwd: folder.path)
    #expect(none.stdout == "", "a place is matched whole")
    let text = try CLI.run(["list", "--text", "omaha"], cwd: folder.path)
    #expect(text.stdout == "omaha.jpg\n")
    let served = ServedLibrary(over: library, in: folder)
    try await served.test { client, _ in
      let response = try await client.execute(
        uri: "/api/assets?place=United%20States", method: .get, headers: ServedLibrary.read)
      let assets = response.object["assets"] as? [[String: Any]]
      #expect(assets?.first?["place"] as? String == "Omaha")
      #expect(assets?.first?["timeZone"] as? String == "America/Chicago")
    }
  }

  @Test("a date from the GPS clock alone is shown on the local clock of the zone there")
  func gpsClock() throws {
    _ = try geo()
    let folder = try TemporaryFolder()
    let path = folder.file("a.jpg")
    try FileManager.default.copyItem(atPath: Fixture.sample("gps.jpg"), toPath: path)
    let run = try CLI.run(
      [
        "-q", "-overwrite_original", "-AllDates=", "-SubSecTimeOriginal=", "-OffsetTimeOriginal=",
        "-GPSDateStamp=2024:07:01", "-GPSTimeStamp=15:00:00", path,
      ], executable: "/usr/bin/exiftool")
    #expect(run.status == 0, "\(run.stderr)")
    // Rio de Janeiro, UTC-3.
    let metadata = try AssetMetadata.read(path: path)
    #expect(metadata.captureDate?.iso8601 == "2024-07-01T12:00:00-03:00")
    #expect(metadata.sources["captureDate"] == "GPS")
    #expect(metadata.place?.name == "Rio de Janeiro")
  }

  @Test("photos with no offset in five zones: each gets its zone, its offset that day, the instant")
  func severalZones() throws {
    _ = try geo()
    let folder = try TemporaryFolder()
    for (n, (latitude, longitude, local, zone, instant)) in [
      (27.7172, 85.324, "2024:01:01 12:00:00", "Asia/Kathmandu", "2024-01-01T06:15:00Z"),
      (39.7392, -104.9903, "2024:07:04 20:00:00", "America/Denver", "2024-07-05T02:00:00Z"),
      (52.52, 13.405, "2024:08:01 09:30:00", "Europe/Berlin", "2024-08-01T07:30:00Z"),
      (-33.8688, 151.2093, "2024:01:15 18:00:00", "Australia/Sydney", "2024-01-15T07:00:00Z"),
      (64.1466, -21.9426, "2024:06:21 23:59:59", "Atlantic/Reykjavik", "2024-06-21T23:59:59Z"),
    ].enumerated() {
      let path = folder.file("\(n).jpg")
      try FileManager.default.copyItem(atPath: Fixture.sample("gps.jpg"), toPath: path)
      let run = try CLI.run(
        [
          "-q", "-overwrite_original", "-OffsetTimeOriginal=", "-SubSecTimeOriginal=",
          "-DateTimeOriginal=\(local)", "-GPSLatitude=\(abs(latitude))",
          "-GPSLatitudeRef=\(latitude < 0 ? "S" : "N")", "-GPSLongitude=\(abs(longitude))",
          "-GPSLongitudeRef=\(longitude < 0 ? "W" : "E")", path,
        ], executable: "/usr/bin/exiftool")
      #expect(run.status == 0, "\(run.stderr)")
      let metadata = try AssetMetadata.read(path: path)
      #expect(metadata.timeZone == zone, "\(zone)")
      #expect(metadata.captureDate?.instant == instant, "\(zone)")
      #expect(
        metadata.captureDate?.localDateTime.replacingOccurrences(of: "-", with: ":")
          .replacingOccurrences(of: "T", with: " ") == local, "\(zone)")
    }
  }
}
