import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// A populated place: a town or city, its region (GeoNames' admin1: a state, a province)
/// and its country.
///
/// `Place` is a `Sendable` value type; it encodes as
/// `{"name", "region", "country", "latitude", "longitude"}`.
package struct Place: Sendable, Equatable, Codable {
  package var name: String
  /// Empty when GeoNames gives none.
  package var region: String
  package var country: String
  /// Where the place is (its centre, as GeoNames has it).
  package var latitude: Double
  package var longitude: Double

  /// `Boulder, Colorado, United States`, leaving out what is empty.
  package var description: String {
    [name, region, country].filter { !$0.isEmpty }.joined(separator: ", ")
  }
}

/// The nearest populated place to a position, from `places.bin`: GeoNames' places of 1,000
/// people or more, in one-degree cells, searched ring by ring outwards.
///
/// Distance is measured on a local flat map around the position (degrees of latitude, and of
/// longitude times the cosine of the position's latitude): exact enough to tell the nearest
/// town, and no trigonometry per candidate. A lookup takes microseconds
/// (`Benchmarks/places.sh` measures it).
package struct PlaceIndex: Sendable {
  private let file: MappedFile
  /// How many places there are.
  package let count: Int
  private let recordsAt: Int
  private let cellsAt: Int
  private let strings: Range<Int>
  private static let recordSize = 20

  init(_ file: MappedFile) throws(DarkroomError) {
    self.file = file
    guard file.starts(with: "DRPLACE1"), file.count >= 16 else {
      throw file.damaged("not a Darkroom places file")
    }
    count = Int(file.u32(8))
    let stringBytes = Int(file.u32(12))
    recordsAt = 16
    cellsAt = recordsAt + count * Self.recordSize
    let stringsAt = cellsAt + (GeoGrid.cells + 1) * 4
    guard count > 0, stringsAt + stringBytes == file.count else {
      throw file.damaged("its sizes do not add up")
    }
    strings = stringsAt..<file.count
    guard file.u32(cellsAt) == 0, Int(file.u32(cellsAt + GeoGrid.cells * 4)) == count else {
      throw file.damaged("its cells do not cover its places")
    }
  }

  /// The records of cell `cell`.
  @inline(__always) private func records(_ cell: Int) -> Range<Int> {
    let start = Int(file.u32(cellsAt + cell * 4))
    let end = Int(file.u32(cellsAt + cell * 4 + 4))
    return start < end && end <= count ? start..<end : 0..<0
  }

  @inline(__always) private func position(_ record: Int) -> (latitude: Double, longitude: Double) {
    let at = recordsAt + record * Self.recordSize
    return (Double(file.i32(at)) / 1e7, Double(file.i32(at + 4)) / 1e7)
  }

  /// The squared flat-map distance, in degrees, from a position whose latitude's cosine is
  /// `scale` (longitudes wrap at 180°).
  @inline(__always) static func distance2(
    _ a: (latitude: Double, longitude: Double), _ b: (latitude: Double, longitude: Double),
    scale: Double
  ) -> Double {
    var dLon = abs(a.longitude - b.longitude)
    if dLon > 180 { dLon = 360 - dLon }
    let dLat = a.latitude - b.latitude
    return dLat * dLat + (dLon * scale) * (dLon * scale)
  }

  /// The place nearest to a position; nil only for a position that is not one.
  package func nearest(latitude: Double, longitude: Double) -> Place? {
    guard let record = nearestRecord(latitude: latitude, longitude: longitude) else { return nil }
    return place(record)
  }

  /// The index of the nearest record (tests compare it with a search of every record).
  func nearestRecord(latitude: Double, longitude: Double) -> Int? {
    guard abs(latitude) <= 90, abs(longitude) <= 180 else { return nil }
    let query = (latitude: latitude, longitude: longitude)
    let scale = max(cos(latitude * .pi / 180), 1e-9)
    let row = GeoGrid.row(latitude)
    let column = GeoGrid.column(longitude)
    var best: (record: Int, distance2: Double)?
    for ring in 0...GeoGrid.columns / 2 {
      // Anything in this ring or beyond is at least ring - 1 whole degrees away in latitude,
      // or in longitude (shrunk by `scale`); once the best is nearer than that, stop.
      let floor = Double(max(0, ring - 1)) * scale
      if let best, best.distance2 <= floor * floor { break }
      // Column offsets of the ring's top and bottom rows: every column once.
      let across = ring >= GeoGrid.columns / 2 ? Array(-179...180) : Array(-ring...ring)
      // Of the rows between: its two sides (one column when they wrap onto each other).
      let sides = ring == 0 ? [0] : ring >= GeoGrid.columns / 2 ? [180] : [-ring, ring]
      for r in max(0, row - ring)...min(GeoGrid.rows - 1, row + ring) {
        for offset in abs(r - row) == ring ? across : sides {
          let c = (column + offset + GeoGrid.columns) % GeoGrid.columns
          for record in records(r * GeoGrid.columns + c) {
            let d = Self.distance2(query, position(record), scale: scale)
            if let current = best,
              d > current.distance2
                || (d == current.distance2 && record > current.record)
            {
              continue
            }
            best = (record, d)
          }
        }
      }
    }
    return best?.record
  }

  /// The nearest record by looking at every one (tests; as slow as it sounds).
  func nearestByEveryRecord(latitude: Double, longitude: Double) -> Int? {
    let scale = max(cos(latitude * .pi / 180), 1e-9)
    var best: (record: Int, distance2: Double)?
    for record in 0..<count {
      let d = Self.distance2((latitude, longitude), position(record), scale: scale)
      if let current = best, d >= current.distance2 { continue }
      best = (record, d)
    }
    return best?.record
  }

  /// Record `record` as a ``Place``.
  func place(_ record: Int) -> Place {
    let at = recordsAt + record * Self.recordSize
    func text(_ field: Int) -> String {
      file.string(at: strings.lowerBound + Int(file.u32(at + field)), within: strings)?.0 ?? ""
    }
    let (latitude, longitude) = position(record)
    return Place(
      name: text(8), region: text(12), country: text(16), latitude: latitude,
      longitude: longitude)
  }
}
