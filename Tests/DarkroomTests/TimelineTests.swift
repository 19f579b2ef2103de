import Foundation
import Testing

@testable import Darkroom

/// The timeline's months: what the gallery's sections and scrubber are made of.
@Suite("The timeline: months from the catalog's index", .offThePool)
struct TimelineTests {
  /// An asset at a local time: `seconds` since 1970 on the clock where it was taken.
  static func asset(_ index: Int, utc: Double, offsetMinutes: Int?) -> Asset {
    var asset = Asset(
      path: "t/\(index).jpg", contentHash: String(repeating: "0", count: 63) + "1",
      identity: FileIdentity(
        device: 1, inode: UInt64(index), size: 10, modified: 0, changed: 0),
      mediaType: .photo, format: "jpeg", width: 4, height: 3, sortDate: utc, addedAt: 0)
    asset.captureOffsetMinutes = offsetMinutes
    return asset
  }

  @Test(
    "A photo's month is the same in Swift and in SQLite: month ends, offsets, leap days, years 0 and 9999",
    arguments: CatalogBackend.allCases)
  func monthsAgree(_ backend: CatalogBackend) throws {
    let folder = try Fixture.temporaryFolder()
    let catalog = try backend.newCatalog(in: folder)
    var instants: [(Double, Int?)] = []
    // Each month's first millisecond and the one before it, 1600 to 2100, with and without
    // an offset that carries it across.
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = try #require(TimeZone(secondsFromGMT: 0))
    for year in stride(from: 1600, through: 2100, by: 7) {
      for month in 1...12 {
        let start = try #require(
          calendar.date(from: DateComponents(year: year, month: month, day: 1))
        )
        .timeIntervalSince1970
        instants += [
          (start, nil), (start - 0.001, nil), (start - 0.0004, nil), (start + 0.0006, nil),
          (start - 60, 1), (start, -1), (start + 3600, -61), (start - 3600 * 14, 14 * 60),
        ]
      }
    }
    // Leap days, the ends of the range the months cover, and a fixed random spread.
    instants += [
      (951_782_400, nil), (951_868_799.999, nil), (-62_167_219_200, nil),
      (-62_167_219_200.001, nil), (253_402_300_799, nil), (253_402_300_800, nil), (0, nil),
      (-1, nil), (-0.0004, nil),
    ]
    var generator = Xorshift(seed: 0x7133)
    for _ in 0..<2000 {
      let seconds = Double(generator.next() % 8_000_000_000) - 3_000_000_000
      let offset = Int(generator.next() % (26 * 60)) - 12 * 60
      instants.append((seconds + Double(generator.next() % 1000) / 1000, offset))
    }
    var changes = CatalogChanges()
    changes.upserts = instants.enumerated().map { Self.asset($0, utc: $1.0, offsetMinutes: $1.1) }
    try catalog.commit(changes)
    let expected = Dictionary(grouping: changes.upserts, by: \.month).mapValues(\.count)
    var newestFirst = AssetQuery()
    newestFirst.sort = .dateDescending
    let months = try catalog.months(newestFirst)
    let found = Dictionary(uniqueKeysWithValues: months.map { ($0.month, $0.count) })
    let differ = Set(found.keys).union(expected.keys).filter { found[$0] != expected[$0] }
    #expect(differ.isEmpty, "months that differ: \(differ.sorted().prefix(10))")
    // One per month asked of the catalog: the same assets.
    // Each asset in its own month, asked of the catalog one month at a time.
    let byMonth = Dictionary(grouping: changes.upserts, by: \.month).mapValues { Set($0.map(\.id)) }
    let placed = try byMonth.keys.filter { month in
      var query = AssetQuery()
      query.month = month
      return Set(try catalog.ids(query)) != byMonth[month]
    }
    #expect(placed.isEmpty, "months holding other assets: \(placed.sorted().prefix(10))")
    // A few by hand: a month's last millisecond and the next one, an offset across New Year.
    #expect(Self.asset(0, utc: 951_868_799.999, offsetMinutes: nil).month == 200_002)
    #expect(Self.asset(0, utc: 951_868_800, offsetMinutes: nil).month == 200_003)
    #expect(Self.asset(0, utc: 1_704_063_600, offsetMinutes: 60).month == 202_401)
    #expect(Self.asset(0, utc: 1_704_063_600, offsetMinutes: nil).month == 202_312)
    #expect(Self.asset(0, utc: -62_167_219_200.5, offsetMinutes: nil).month == 0)
    // Newest first for `-date`, oldest first for `date`; the order of months is strict.
    let order = months.map(\.month)
    #expect(order == order.sorted(by: >) && Set(order).count == order.count)
    #expect(try catalog.months(AssetQuery()).map(\.month) == order.reversed())
  }

  @Test(
    "the whole library's month counts, kept by triggers, follow inserts, date changes, the trash and removals",
    arguments: CatalogBackend.allCases)
  func keptCounts(_ backend: CatalogBackend) throws {
    let folder = try Fixture.temporaryFolder()
    let catalog = try backend.newCatalog(in: folder)
    var generator = Xorshift(seed: 31)
    var assets = (0..<400).map { index in
      Self.asset(
        index, utc: Double(generator.next() % 400_000_000) + 1_300_000_000,
        offsetMinutes: index % 3 == 0 ? 600 : nil)
    }
    // Counted as the triggers keep them (the plain query), and from the rows (a filter that
    // lets everything through takes the other way).
    func agree(_ when: String) throws {
      var everything = AssetQuery()
      everything.from = -1e15
      let kept = try catalog.months(AssetQuery())
      #expect(kept == (try catalog.months(everything)), "\(when)")
      var all = AssetQuery()
      all.album = .smart(.all)
      #expect(try catalog.months(all) == kept, "\(when)")
      #expect(kept.reduce(0) { $0 + $1.count } == (try catalog.count(AssetQuery())), "\(when)")
    }
    var changes = CatalogChanges()
    changes.upserts = assets
    try catalog.commit(changes)
    try agree("after the first commit")
    // New dates (the same rows, upserted), some across months.
    for index in stride(from: 0, to: assets.count, by: 3) {
      assets[index].sortDate += Double(generator.next() % 90) * 86_400
      assets[index].captureOffsetMinutes = index % 2 == 0 ? -300 : nil
    }
    changes.upserts = assets
    try catalog.commit(changes)
    try agree("after new dates")
    // To the trash and back, and removed.
    for asset in assets.prefix(60) {
      try catalog.move(asset.id, to: ".darkroom/trash/\(asset.id)/\(asset.name)", trashedAt: 1)
    }
    try agree("after the trash")
    for asset in assets.prefix(20) { try catalog.move(asset.id, to: asset.path, trashedAt: nil) }
    try agree("after a restore")
    var removals = CatalogChanges()
    removals.removals = assets.suffix(100).map(\.id)
    try catalog.commit(removals)
    try agree("after removals")
    #expect(try catalog.count(AssetQuery()) == 400 - 40 - 100)
  }

  @Test(
    "a user album pages in its own order: each asset once, by cursor",
    arguments: CatalogBackend.allCases)
  func albumOrderPages(_ backend: CatalogBackend) throws {
    let folder = try Fixture.temporaryFolder()
    let catalog = try backend.newCatalog(in: folder)
    var changes = CatalogChanges()
    changes.upserts = (0..<7).map { Self.asset($0, utc: Double($0) * 86_400, offsetMinutes: nil) }
    try catalog.commit(changes)
    // The album's order is not the dates' order.
    let order = [3, 0, 6, 1, 5, 2, 4].map { changes.upserts[$0].id }
    try catalog.createAlbum("Mixed")
    try catalog.addToAlbum("Mixed", order)
    var query = AssetQuery()
    query.album = .user("Mixed")
    query.sort = .album
    var seen: [AssetID] = []
    while true {
      let page = try catalog.assets(query, offset: 0, limit: 2)
      if page.isEmpty { break }
      seen += page.map(\.id)
      query.after = page.last?.id
    }
    #expect(seen == order)
  }

  @Test("a photo's previous and next in a query's order: at both ends, between, and not in it")
  func neighbours() throws {
    let lib = try LibraryFixture()
    for i in 0..<3 { try lib.add("orientation-\(i + 1).jpg", as: "p\(i).jpg", tag: "p\(i)") }
    try lib.add("gps.jpg", as: "trashed.jpg", tag: "trash")
    _ = try lib.scan()
    let library = lib.library
    let ids = try (0..<3).map { try #require(try lib.asset("p\($0).jpg")).id }
    let trashed = try #require(try lib.asset("trashed.jpg")).id
    _ = try library.trash([trashed])
    let byName = try AssetQuery(parameters: [("sort", "name")])
    #expect(try library.neighbours(of: ids[0], in: byName) == (nil, ids[1]))
    #expect(try library.neighbours(of: ids[1], in: byName) == (ids[0], ids[2]))
    #expect(try library.neighbours(of: ids[2], in: byName) == (ids[1], nil))
    #expect(try library.neighbours(of: trashed, in: byName) == (nil, nil))
    let newestFirst = try AssetQuery(parameters: [("sort", "-date")])  // p2 is the newest
    #expect(try library.neighbours(of: ids[0], in: newestFirst) == (ids[1], nil))
  }

  @Test("month= in the list's grammar: 2019-03 and 0000-00 read, anything else refused naming it")
  func monthParameter() throws {
    #expect(try AssetQuery(parameters: [("month", "2019-03")]).month == 201_903)
    #expect(try AssetQuery(parameters: [("month", "0000-00")]).month == 0)
    #expect(AssetQuery.monthText(201_903) == "2019-03")
    #expect(AssetQuery.monthText(0) == "0000-00")
    #expect(AssetQuery.monthText(1) == "0000-01")
    for bad in ["2019-13", "2019-00", "2019-3", "19-03", "2019-03-01", "２０１９-03", "", "-001-03"] {
      #expect(throws: DarkroomError.self) { try AssetQuery(parameters: [("month", bad)]) }
      do {
        _ = try AssetQuery(parameters: [("month", bad)])
      } catch {
        #expect(error.message == "month takes a month, YYYY-MM (2019-03); not \(bad)")
      }
    }
  }
}

/// A small fixed random sequence (xorshift64*), the same on every run.
struct Xorshift: RandomNumberGenerator {
  var state: UInt64
  init(seed: UInt64) { state = seed == 0 ? 1 : seed }
  mutating func next() -> UInt64 {
    state ^= state >> 12
    state ^= state << 25
    state ^= state >> 27
    return state &* 2_685_821_657_736_338_717
  }
}
