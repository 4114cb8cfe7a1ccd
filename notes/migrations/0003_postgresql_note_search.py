"""PostgreSQL's side of migration 0002: the notes search index, opt-in per namespace kind.

A table of tsvectors (the 'simple' configuration: lower-cased words, no stemming, as
FTS5's unicode61 tokenizer) with a GIN index. Diacritics are removed as FTS5's
``remove_diacritics 2`` does, by ``spaceduck_fold``: a translate() over the Latin letters
whose NFKD decomposition is an ASCII letter plus marks (generated with unicodedata; the
unaccent extension is not always installed). The index is kept by one plpgsql trigger under the same rule as SQLite's: only
notes of an enabled kind (notes_notesearchkind) are indexed, and a note is removed
only if it was added.
"""

from django.db import migrations

from spaceduck.core.db.migration_ops import postgresql_only

# Latin letters with diacritics (U+00C0-U+024F, U+1E00-U+1EFF) and their base letters.
FOLD_FROM = "ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöùúûüýÿĀāĂăĄąĆćĈĉĊċČčĎďĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĨĩĪīĬĭĮįİĴĵĶķĹĺĻļĽľŃńŅņŇňŌōŎŏŐőŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽžſƠơƯưǍǎǏǐǑǒǓǔǕǖǗǘǙǚǛǜǞǟǠǡǦǧǨǩǪǫǬǭǰǴǵǸǹǺǻȀȁȂȃȄȅȆȇȈȉȊȋȌȍȎȏȐȑȒȓȔȕȖȗȘșȚțȞȟȦȧȨȩȪȫȬȭȮȯȰȱȲȳḀḁḂḃḄḅḆḇḈḉḊḋḌḍḎḏḐḑḒḓḔḕḖḗḘḙḚḛḜḝḞḟḠḡḢḣḤḥḦḧḨḩḪḫḬḭḮḯḰḱḲḳḴḵḶḷḸḹḺḻḼḽḾḿṀṁṂṃṄṅṆṇṈṉṊṋṌṍṎṏṐṑṒṓṔṕṖṗṘṙṚṛṜṝṞṟṠṡṢṣṤṥṦṧṨṩṪṫṬṭṮṯṰṱṲṳṴṵṶṷṸṹṺṻṼṽṾṿẀẁẂẃẄẅẆẇẈẉẊẋẌẍẎẏẐẑẒẓẔẕẖẗẘẙẛẠạẢảẤấẦầẨẩẪẫẬậẮắẰằẲẳẴẵẶặẸẹẺẻẼẽẾếỀềỂểỄễỆệỈỉỊịỌọỎỏỐốỒồỔổỖỗỘộỚớỜờỞởỠỡỢợỤụỦủỨứỪừỬửỮữỰựỲỳỴỵỶỷỸỹ"
FOLD_TO = "AAAAAACEEEEIIIINOOOOOUUUUYaaaaaaceeeeiiiinooooouuuuyyAaAaAaCcCcCcCcDdEeEeEeEeEeGgGgGgGgHhIiIiIiIiIJjKkLlLlLlNnNnNnOoOoOoRrRrRrSsSsSsSsTtTtUuUuUuUuUuUuWwYyYZzZzZzsOoUuAaIiOoUuUuUuUuUuAaAaGgKkOoOojGgNnAaAaAaEeEeIiIiOoOoRrRrUuUuSsTtHhAaEeOoOoOoOoYyAaBbBbBbCcDdDdDdDdDdEeEeEeEeEeFfGgHhHhHhHhHhIiIiKkKkKkLlLlLlLlMmMmMmNnNnNnNnOoOoOoOoPpPpRrRrRrRrSsSsSsSsSsTtTtTtTtUuUuUuUuUuVvVvWwWwWwWwWwXxXxYyZzZzZzhtwysAaAaAaAaAaAaAaAaAaAaAaAaEeEeEeEeEeEeEeEeIiIiOoOoOoOoOoOoOoOoOoOoOoOoUuUuUuUuUuUuUuYyYyYyYy"

ENABLED = "EXISTS (SELECT 1 FROM notes_notesearchkind WHERE kind = {row}.namespace_kind)"

FORWARD = [
    f"""
    CREATE FUNCTION spaceduck_fold(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN translate($1, '{FOLD_FROM}', '{FOLD_TO}')
    """,
    "CREATE TABLE notes_fts (note_id bigint PRIMARY KEY, body tsvector NOT NULL)",
    "CREATE INDEX notes_fts_body_idx ON notes_fts USING gin (body)",
    f"""
    CREATE FUNCTION notes_fts_sync() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
            DELETE FROM notes_fts WHERE note_id = OLD.id;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') AND {ENABLED.format(row="NEW")} THEN
            INSERT INTO notes_fts (note_id, body) VALUES (NEW.id, to_tsvector('simple', spaceduck_fold(NEW.body)));
        END IF;
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER notes_fts_ai AFTER INSERT ON notes_note
        FOR EACH ROW EXECUTE FUNCTION notes_fts_sync()
    """,
    """
    CREATE TRIGGER notes_fts_ad AFTER DELETE ON notes_note
        FOR EACH ROW EXECUTE FUNCTION notes_fts_sync()
    """,
    """
    CREATE TRIGGER notes_fts_au AFTER UPDATE OF body ON notes_note
        FOR EACH ROW EXECUTE FUNCTION notes_fts_sync()
    """,
    # Kinds enabled before this migration (a database moved from SQLite with its notes).
    """
    INSERT INTO notes_fts (note_id, body)
        SELECT n.id, to_tsvector('simple', spaceduck_fold(n.body)) FROM notes_note AS n
        WHERE EXISTS (SELECT 1 FROM notes_notesearchkind AS k WHERE k.kind = n.namespace_kind)
    """,
]
REVERSE = [
    "DROP TRIGGER IF EXISTS notes_fts_au ON notes_note",
    "DROP TRIGGER IF EXISTS notes_fts_ad ON notes_note",
    "DROP TRIGGER IF EXISTS notes_fts_ai ON notes_note",
    "DROP FUNCTION IF EXISTS notes_fts_sync()",
    "DROP TABLE IF EXISTS notes_fts",
    "DROP FUNCTION IF EXISTS spaceduck_fold(text)",
]


class Migration(migrations.Migration):
    dependencies = [("notes", "0002_note_fts")]

    operations = [postgresql_only(migrations.RunSQL(FORWARD, reverse_sql=REVERSE))]
