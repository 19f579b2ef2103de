import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// A value bound to a catalog statement, whichever database runs it.
enum CatalogValue: Sendable, Equatable {
  case null
  case int(Int64)
  case double(Double)
  case text(String)

  /// As PostgreSQL reads it in a text parameter (nil: NULL).
  var postgresText: String? {
    switch self {
    case .null: nil
    case .int(let value): String(value)
    case .text(let value): value
    case .double(let value):
      if value.isNaN {
        "NaN"
      } else if value.isInfinite {
        value < 0 ? "-Infinity" : "Infinity"
      } else {
        // Swift prints the shortest text that reads back as the same double.
        "\(value)"
      }
    }
  }
}

/// What becomes a ``CatalogValue``.
protocol CatalogValueConvertible {
  var catalogValue: CatalogValue { get }
}

extension Int: CatalogValueConvertible { var catalogValue: CatalogValue { .int(Int64(self)) } }
extension Int64: CatalogValueConvertible { var catalogValue: CatalogValue { .int(self) } }
extension Double: CatalogValueConvertible { var catalogValue: CatalogValue { .double(self) } }
extension String: CatalogValueConvertible { var catalogValue: CatalogValue { .text(self) } }
extension Bool: CatalogValueConvertible { var catalogValue: CatalogValue { .int(self ? 1 : 0) } }
extension Optional: CatalogValueConvertible where Wrapped: CatalogValueConvertible {
  var catalogValue: CatalogValue { self?.catalogValue ?? .null }
}

/// One row a catalog read, by column index, whichever database read it.
protocol CatalogRow {
  func text(_ index: Int) -> String?
  func int(_ index: Int) -> Int64?
  func double(_ index: Int) -> Double?
}

/// The SQL both catalogs speak (``SQLiteCatalog``, ``PostgresCatalog``): the asset columns
/// and how a row becomes an ``Asset``, and a query's filter and order. Statements mark
/// their parameters with `?`; PostgreSQL's catalog numbers them.
enum CatalogSQL {
  /// Where the two databases differ in the SQL written here.
  struct Dialect: Sendable {
    /// The case-insensitive LIKE (SQLite's LIKE is, for ASCII; PostgreSQL's ILIKE).
    var like: String
    /// `MM-DD` of an asset's sort date on the clock where it was taken (``Asset/day``).
    var monthDay: String
  }

  static let columns = """
    a.id, f.path, a.name, a.hash, a.byteSize, a.device, a.inode, a.size, a.mtime, a.ctime,
    a.mediaType, a.format, a.width, a.height, a.displayWidth, a.displayHeight, a.orientation,
    a.captureDate, a.captureOffset, a.sortDate, a.latitude, a.longitude, a.altitude, a.camera,
    a.lens, a.exposureTime, a.fNumber, a.iso, a.focalLength, a.duration, a.adjustmentVersion,
    a.favourite, a.hidden, a.trashedAt, a.offline, a.addedAt, a.trashedFrom, a.caption,
    a.rating, a.keywords, a.timeZone, a.place, a.region, a.country, a.people, a.thumbOffset,
    a.thumbLength, a.motionOffset, a.motionLength, a.liveVideo, a.foreignEdit, a.damage, a.damageDetail
    """
  static let from = "asset a JOIN folder f ON f.id = a.folderId"

  /// The columns an asset's row is written with (after `id` and `folderId`), in
  /// ``values(of:)``'s order.
  static let writtenColumns = [
    "name", "hash", "byteSize", "device", "inode", "size", "mtime", "ctime", "mediaType",
    "format", "width", "height", "displayWidth", "displayHeight", "orientation", "captureDate",
    "captureOffset", "sortDate", "latitude", "longitude", "altitude", "camera", "lens",
    "exposureTime", "fNumber", "iso", "focalLength", "duration", "adjustmentVersion",
    "favourite", "hidden", "trashedAt", "offline", "addedAt", "caption", "rating", "keywords",
    "timeZone", "place", "region", "country", "people", "thumbOffset", "thumbLength",
    "motionOffset", "motionLength", "liveVideo", "foreignEdit", "damage", "damageDetail",
  ]
  /// The columns a rescan replaces (favourite, hidden, trash and when it was added are the
  /// catalog's own).
  static let replacedColumns = writtenColumns.filter {
    !["favourite", "hidden", "trashedAt", "addedAt"].contains($0)
  }

  /// An asset's row values for ``writtenColumns``.
  /// ``Catalog/markDamaged(_:ifStill:)``'s write, and its values.
  static let markDamaged = """
    UPDATE asset SET damage = ?, damageDetail = ? WHERE id = ? AND damage IS NULL AND hash = ?
      AND device = ? AND inode = ? AND size = ? AND mtime = ?
    """
  static func markDamagedValues(_ damage: AssetDamage, _ a: Asset) -> [CatalogValue] {
    let i = a.identity
    let values: [any CatalogValueConvertible] = [
      damage.kind.rawValue, damage.detail, a.id.rawValue, a.contentHash,
      Int64(bitPattern: i.device), Int64(bitPattern: i.inode), i.size, i.modified,
    ]
    return values.map(\.catalogValue)
  }

  static func values(of a: Asset) -> [CatalogValue] {
    let i = a.identity
    let values: [any CatalogValueConvertible] = [
      a.name, a.contentHash, a.byteSize, Int64(bitPattern: i.device), Int64(bitPattern: i.inode),
      i.size, i.modified, i.changed, a.mediaType.rawValue, a.format, a.width, a.height,
      a.displayWidth, a.displayHeight, a.orientation, a.captureDate, a.captureOffsetMinutes,
      a.sortDate, a.latitude, a.longitude, a.altitude, a.camera, a.lens, a.exposureTime,
      a.fNumber, a.iso, a.focalLength, a.duration, a.adjustmentVersion, a.isFavourite,
      a.isHidden, a.trashedAt, a.isOffline, a.addedAt, a.caption, a.rating,
      keywordText(a.keywords), a.timeZone, a.place, a.region, a.country, keywordText(a.people),
      a.exifThumbnail?.offset, a.exifThumbnail?.length, a.motionVideo?.offset,
      a.motionVideo?.length, a.liveVideo, a.foreignSettings?.catalogJSON,
      a.damage?.kind.rawValue, a.damage?.detail,
    ]
    return values.map(\.catalogValue)
  }

  /// The asset in a row of ``columns``.
  static func asset<Row: CatalogRow>(_ row: Row) -> Asset {
    let folder = row.text(1) ?? ""
    let name = row.text(2) ?? ""
    func int(_ index: Int) -> Int? { row.int(index).map { Int(truncatingIfNeeded: $0) } }
    var asset = Asset(
      id: AssetID(unchecked: row.text(0) ?? ""), path: folder.isEmpty ? name : folder + "/" + name,
      contentHash: row.text(3) ?? "", byteSize: row.int(4) ?? 0,
      identity: FileIdentity(
        device: UInt64(bitPattern: row.int(5) ?? 0), inode: UInt64(bitPattern: row.int(6) ?? 0),
        size: row.int(7) ?? 0, modified: row.int(8) ?? 0, changed: row.int(9) ?? 0),
      mediaType: row.text(10).flatMap(MediaType.init(rawValue:)) ?? .photo,
      format: row.text(11) ?? "", width: int(12) ?? 0, height: int(13) ?? 0,
      displayWidth: int(14) ?? 0, displayHeight: int(15) ?? 0, orientation: int(16) ?? 1,
      captureDate: row.double(17), captureOffsetMinutes: int(18), sortDate: row.double(19) ?? 0,
      latitude: row.double(20), longitude: row.double(21), altitude: row.double(22),
      camera: row.text(23), lens: row.text(24), exposureTime: row.double(25),
      fNumber: row.double(26), iso: int(27), focalLength: row.double(28),
      duration: row.double(29), adjustmentVersion: int(30) ?? 0,
      isFavourite: (row.int(31) ?? 0) != 0, isHidden: (row.int(32) ?? 0) != 0,
      trashedAt: row.double(33), isOffline: (row.int(34) ?? 0) != 0,
      addedAt: row.double(35) ?? 0, trashedFrom: row.text(36))
    (asset.caption, asset.rating) = (row.text(37), int(38))
    asset.keywords = keywordList(row.text(39))
    (asset.timeZone, asset.place, asset.region, asset.country) = (
      row.text(40), row.text(41), row.text(42), row.text(43)
    )
    asset.people = keywordList(row.text(44))
    if let offset = int(45), let length = int(46) {
      asset.exifThumbnail = FileRange(offset: offset, length: length)
    }
    if let offset = int(47), let length = int(48) {
      asset.motionVideo = FileRange(offset: offset, length: length)
    }
    asset.liveVideo = row.text(49)
    if let json = row.text(50) {
      asset.foreignSettings = try? JSONDecoder().decode(ForeignSettings.self, from: Data(json.utf8))
    }
    if let kind = row.text(51).flatMap(DarkroomError.Kind.init(rawValue:)) {
      asset.damage = AssetDamage(
        kind: kind, detail: row.text(52) ?? "", video: asset.mediaType == .video)
    }
    return asset
  }

  /// Keywords (and people) as the catalog keeps them: each between newlines (nil for none),
  /// so that a keyword is found whole with LIKE.
  static func keywordText(_ keywords: [String]) -> String? {
    let kept = keywords.map { $0.replacingOccurrences(of: "\n", with: " ") }.filter { !$0.isEmpty }
    return kept.isEmpty ? nil : "\n" + kept.joined(separator: "\n") + "\n"
  }

  /// The list ``keywordText(_:)`` kept.
  static func keywordList(_ text: String?) -> [String] {
    text.map { $0.split(separator: "\n").map(String.init) } ?? []
  }

  /// A path's folder and name.
  static func split(_ path: String) -> (folder: String, name: String) {
    guard let slash = path.lastIndex(of: "/") else { return ("", path) }
    return (String(path[..<slash]), String(path[path.index(after: slash)...]))
  }

  /// Whether a query is the whole library as the gallery opens it (the visible assets, in
  /// any order), or one month of it: what the kept month counts (`monthCount`) answer.
  static func isWholeLibrary(_ query: AssetQuery) -> Bool {
    var plain = query
    plain.sort = AssetQuery().sort
    plain.month = nil
    if plain.album == .smart(.all) { plain.album = nil }
    return plain == AssetQuery()
  }

  /// A folder row that holds nothing (no folder, asset or skipped file), with its parent: what
  /// goes when a row leaves it (arguments: its id four times).
  static let removeIfEmpty = """
    SELECT parentId FROM folder WHERE id = ? AND path != ''
    AND NOT EXISTS (SELECT 1 FROM folder g WHERE g.parentId = ?)
    AND NOT EXISTS (SELECT 1 FROM asset WHERE folderId = ?)
    AND NOT EXISTS (SELECT 1 FROM skipped WHERE folderId = ?)
    """

  /// Every folder but the library's own, with its visible assets' count, its newest one and
  /// its parent's path.
  /// An asset a poster can show (``Asset/isShowable``): whole, or damaged past a header
  /// that was read.
  static let showable = "(a.damage IS NULL OR a.width > 0)"

  /// The poster of a smart album: the first of its newest assets that can be shown.
  static func poster(_ newest: [Asset]) -> AssetID? {
    newest.first(where: \.isShowable)?.id
  }

  static let folderAlbums = """
    SELECT f.path,
      (SELECT count(*) FROM asset a WHERE a.folderId = f.id AND a.trashedAt IS NULL
       AND a.hidden = 0),
      (SELECT a.id FROM asset a WHERE a.folderId = f.id AND a.trashedAt IS NULL
       AND a.hidden = 0 AND \(showable) ORDER BY a.sortDate DESC, a.id DESC LIMIT 1),
      p.path
    FROM folder f LEFT JOIN folder p ON p.id = f.parentId
    WHERE f.path != '.darkroom' AND f.path NOT LIKE '.darkroom/%'
    ORDER BY f.path
    """

  /// Every user album with its count (outside the trash) and its poster: the one chosen, else
  /// the newest.
  static let userAlbums = """
    SELECT b.title,
      (SELECT count(*) FROM albumAsset p JOIN asset a ON a.id = p.assetId
       WHERE p.albumId = b.id AND a.trashedAt IS NULL),
      coalesce(b.posterId, (SELECT a.id FROM albumAsset p JOIN asset a ON a.id = p.assetId
       WHERE p.albumId = b.id AND a.trashedAt IS NULL AND \(showable)
       ORDER BY a.sortDate DESC, a.id DESC LIMIT 1))
    FROM album b ORDER BY b.title
    """

  /// Countries, or (bound: a country) that country's towns: name, region, country, count and
  /// the newest showable asset's id, most first. (Window functions: SQLite 3.25 and
  /// PostgreSQL alike.)
  static func places(inCountry: Bool) -> String {
    let (name, region, partition) =
      inCountry
      ? ("a.place", "a.region", "a.place, a.region") : ("a.country", "NULL", "a.country")
    return """
      SELECT name, region, country, n, id FROM (
        SELECT \(name) AS name, \(region) AS region, a.country AS country, a.id AS id,
          count(*) OVER (PARTITION BY \(partition)) AS n,
          row_number() OVER (PARTITION BY \(partition)
            ORDER BY \(showable) DESC, a.sortDate DESC, a.id DESC) AS r
        FROM asset a
        WHERE a.trashedAt IS NULL AND a.hidden = 0 AND a.country IS NOT NULL
          AND \(name) IS NOT NULL\(inCountry ? " AND a.country = ?" : "")
      ) AS p WHERE r = 1 ORDER BY n DESC, name
      """
  }

  /// Visible assets with a position in a box (bound: south, north, then west and east, or
  /// for a box across the antimeridian the longitudes past west or before east), newest
  /// first: id, latitude, longitude, whether it shows something.
  static func positions(acrossAntimeridian: Bool) -> String {
    """
    SELECT a.id, a.latitude, a.longitude, CASE WHEN \(showable) THEN 1 ELSE 0 END
    FROM asset a
    WHERE a.latitude IS NOT NULL AND a.longitude IS NOT NULL
      AND a.trashedAt IS NULL AND a.hidden = 0
      AND a.latitude BETWEEN ? AND ?
      AND \(acrossAntimeridian ? "(a.longitude >= ? OR a.longitude <= ?)" : "a.longitude BETWEEN ? AND ?")
    ORDER BY a.sortDate DESC, a.id DESC
    """
  }

  /// The hash and id of every asset outside the trash whose content another one has.
  static let exactDuplicates = """
    SELECT hash, id FROM asset WHERE trashedAt IS NULL AND hash IN (
      SELECT hash FROM asset WHERE trashedAt IS NULL GROUP BY hash HAVING count(*) > 1)
    """

  /// Every photo's stored fingerprint for its current content (the content's hash where none
  /// is stored), and its upright size. Photos under ``Library/smallestLookAlike`` pixels
  /// on a side (a 1x1 spacer, an icon: a fingerprint of 64 bits says nothing of them) and
  /// damaged ones have none.
  static let fingerprints = """
    SELECT a.id, CASE WHEN p.value IS NULL THEN a.hash ELSE '' END, p.value, p.centre,
      a.displayWidth, a.displayHeight
    FROM asset a
    LEFT JOIN fingerprint p ON p.assetId = a.id AND p.contentHash = a.hash
    WHERE a.trashedAt IS NULL AND a.mediaType = 'photo' AND a.offline = 0
      AND a.damage IS NULL AND a.displayWidth >= \(Library.smallestLookAlike)
      AND a.displayHeight >= \(Library.smallestLookAlike)
    """

  /// Forgets the jobs that ended before a time, but a number that ended last (arguments: the
  /// time, the number).
  static let forgetJobs = """
    DELETE FROM job WHERE endedAt < ? AND id NOT IN
      (SELECT id FROM job WHERE endedAt IS NOT NULL ORDER BY endedAt DESC LIMIT ?)
    """

  /// A query's order (columns of `asset a`), and the values it binds.
  static func order(_ query: AssetQuery) -> (String, [CatalogValue]) {
    switch query.sort {
    case .date: ("a.sortDate, a.id", [])
    case .dateDescending: ("a.sortDate DESC, a.id DESC", [])
    case .name: ("a.name, a.id", [])
    case .size: ("a.byteSize, a.id", [])
    case .album:
      if case .user(let title)? = query.album {
        (
          """
          (SELECT position FROM albumAsset p JOIN album b ON b.id = p.albumId
           WHERE b.title = ? AND p.assetId = a.id), a.id
          """, [.text(title)]
        )
      } else {
        ("a.sortDate, a.id", [])
      }
    }
  }

  /// A query's `WHERE` clause on `asset a` (empty for none), and the values it binds.
  static func filter(_ q: AssetQuery, _ dialect: Dialect) -> (String, [CatalogValue]) {
    var clauses: [String] = []
    var arguments: [CatalogValue] = []
    func add(_ clause: String, _ values: [any CatalogValueConvertible] = []) {
      clauses.append(clause)
      arguments += values.map(\.catalogValue)
    }
    let like = dialect.like
    switch q.album {
    case nil: break
    case .folder(let path): add("a.folderId = (SELECT id FROM folder WHERE path = ?)", [path])
    case .user(let title):
      add(
        "a.id IN (SELECT assetId FROM albumAsset JOIN album ON album.id = albumId WHERE title = ?)",
        [title])
    case .smart(let smart):
      switch smart {
      case .all, .trash: break
      case .favourites: add("a.favourite = 1")
      case .edited: add("a.adjustmentVersion > 0")
      case .videos: add("a.mediaType = 'video'")
      case .withLocation: add("a.latitude IS NOT NULL")
      case .problems: add("a.damage IS NOT NULL")
      case .recentlyAdded:
        add(
          "a.addedAt >= ?",
          [Double(AssetID.nowMilliseconds()) / 1000 - SmartAlbum.recentDays * 86400])
      }
    }
    if let after = q.after, q.sort == .album, case .user(let title)? = q.album {
      // A user album in its own order: after the cursor's place in it (then its id).
      let position =
        "(SELECT position FROM albumAsset p JOIN album b ON b.id = p.albumId WHERE b.title = ? AND p.assetId = "
      add(
        "(\(position)a.id), a.id) > ((\(position)?)), ?)",
        [title, title, after.rawValue, after.rawValue])
    } else if let after = q.after {
      // After the cursor's asset in the query's order (keyset paging: no rows skipped).
      let key: String
      let descending = q.sort == .dateDescending
      switch q.sort {
      case .date, .dateDescending: key = "sortDate"
      case .name: key = "name"
      case .size: key = "byteSize"
      case .album: key = "sortDate"
      }
      add(
        "(a.\(key), a.id) \(descending ? "<" : ">") (SELECT \(key), id FROM asset WHERE id = ?)",
        [after.rawValue])
    }
    let trashed = q.trashed || q.album == .smart(.trash)
    add(trashed ? "a.trashedAt IS NOT NULL" : "a.trashedAt IS NULL")
    if !q.includeHidden { add("a.hidden = 0") }
    if let type = q.mediaType { add("a.mediaType = ?", [type.rawValue]) }
    if let from = q.from { add("a.sortDate >= ?", [from]) }
    if let to = q.to { add("a.sortDate <= ?", [to]) }
    if let month = q.month { add("a.month = ?", [month]) }
    if let day = q.day {
      add("\(dialect.monthDay) = ?", [AssetQuery.dayText(day)])
    }
    // Text matched literally by LIKE: its own wildcards escaped.
    func literal(_ text: String) -> String {
      text.replacingOccurrences(of: "\\", with: "\\\\")
        .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
    }
    if let camera = q.camera {
      add("a.camera \(like) ? ESCAPE '\\'", ["%" + literal(camera) + "%"])
    }
    if let edited = q.edited { add(edited ? "a.adjustmentVersion > 0" : "a.adjustmentVersion = 0") }
    if let damaged = q.damaged { add(damaged ? "a.damage IS NOT NULL" : "a.damage IS NULL") }
    if let only = q.only { add("a.id = ?", [only.rawValue]) }
    if let rating = q.rating {
      add("a.rating BETWEEN ? AND ?", [rating.lowerBound, rating.upperBound])
    }
    if let keyword = q.keyword {
      add("a.keywords \(like) ? ESCAPE '\\'", ["%\n" + literal(keyword) + "\n%"])
    }
    if let text = q.text {
      let pattern = "%" + literal(text) + "%"
      let fields = [
        "a.name", "a.caption", "a.keywords", "a.camera", "a.place", "a.region", "a.country",
        "a.people",
      ]
      add(
        "(" + fields.map { "\($0) \(like) ? ESCAPE '\\'" }.joined(separator: " OR ") + ")",
        fields.map { _ in pattern })
    }
    if let place = q.place {
      // A place, region or country, whole (any case): "Colorado", "Boulder", "Germany".
      let fields = ["a.place", "a.region", "a.country"]
      add(
        "(" + fields.map { "\($0) \(like) ? ESCAPE '\\'" }.joined(separator: " OR ") + ")",
        fields.map { _ in literal(place) })
    }
    if let favourite = q.favourite { add("a.favourite = ?", [favourite]) }
    if let near = q.near {
      // A box first (cheap, on the columns), then the exact distance.
      let dLat = near.kilometres / 111.2
      let cosine = max(0.01, cos(near.latitude * .pi / 180))
      let dLon = min(180, near.kilometres / (111.2 * cosine))
      add(
        "a.latitude BETWEEN ? AND ? AND dr_distance_km(a.latitude, a.longitude, ?, ?) <= ?",
        [
          near.latitude - dLat, near.latitude + dLat, near.latitude, near.longitude,
          near.kilometres,
        ])
      if dLon < 180 {
        add(
          "(a.longitude BETWEEN ? AND ? OR a.longitude BETWEEN ? AND ? OR a.longitude BETWEEN ? AND ?)",
          [
            near.longitude - dLon, near.longitude + dLon, near.longitude - dLon + 360,
            near.longitude + dLon + 360, near.longitude - dLon - 360, near.longitude + dLon - 360,
          ])
      }
    }
    if let minimum = q.minDuration { add("a.duration >= ?", [minimum]) }
    if let maximum = q.maxDuration { add("a.duration <= ?", [maximum]) }
    return (clauses.isEmpty ? "" : "WHERE " + clauses.joined(separator: " AND "), arguments)
  }
}
