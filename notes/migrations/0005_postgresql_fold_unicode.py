"""PostgreSQL: note search folds Unicode as SQLite's does and as queries are folded
(``spaceduck.core.fts.fold``): NFKC first, so an accent typed as a separate combining mark
("cafe" + U+0301) composes into the letter the translate() of 0003 folds; any combining
mark left over (on a letter with no precomposed form) is removed, as FTS5's
``remove_diacritics 2`` drops it. The index of enabled kinds is rebuilt with the new fold.
"""

from django.db import migrations

from spaceduck.core.db.migration_ops import postgresql_only

# Copied from 0003 (a migration must not import a module that may change).
FOLD_FROM = "ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöùúûüýÿĀāĂăĄąĆćĈĉĊċČčĎďĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĨĩĪīĬĭĮįİĴĵĶķĹĺĻļĽľŃńŅņŇňŌōŎŏŐőŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽžſƠơƯưǍǎǏǐǑǒǓǔǕǖǗǘǙǚǛǜǞǟǠǡǦǧǨǩǪǫǬǭǰǴǵǸǹǺǻȀȁȂȃȄȅȆȇȈȉȊȋȌȍȎȏȐȑȒȓȔȕȖȗȘșȚțȞȟȦȧȨȩȪȫȬȭȮȯȰȱȲȳḀḁḂḃḄḅḆḇḈḉḊḋḌḍḎḏḐḑḒḓḔḕḖḗḘḙḚḛḜḝḞḟḠḡḢḣḤḥḦḧḨḩḪḫḬḭḮḯḰḱḲḳḴḵḶḷḸḹḺḻḼḽḾḿṀṁṂṃṄṅṆṇṈṉṊṋṌṍṎṏṐṑṒṓṔṕṖṗṘṙṚṛṜṝṞṟṠṡṢṣṤṥṦṧṨṩṪṫṬṭṮṯṰṱṲṳṴṵṶṷṸṹṺṻṼṽṾṿẀẁẂẃẄẅẆẇẈẉẊẋẌẍẎẏẐẑẒẓẔẕẖẗẘẙẛẠạẢảẤấẦầẨẩẪẫẬậẮắẰằẲẳẴẵẶặẸẹẺẻẼẽẾếỀềỂểỄễỆệỈỉỊịỌọỎỏỐốỒồỔổỖỗỘộỚớỜờỞởỠỡỢợỤụỦủỨứỪừỬửỮữỰựỲỳỴỵỶỷỸỹ"
FOLD_TO = "AAAAAACEEEEIIIINOOOOOUUUUYaaaaaaceeeeiiiinooooouuuuyyAaAaAaCcCcCcCcDdEeEeEeEeEeGgGgGgGgHhIiIiIiIiIJjKkLlLlLlNnNnNnOoOoOoRrRrRrSsSsSsSsTtTtUuUuUuUuUuUuWwYyYZzZzZzsOoUuAaIiOoUuUuUuUuUuAaAaGgKkOoOojGgNnAaAaAaEeEeIiIiOoOoRrRrUuUuSsTtHhAaEeOoOoOoOoYyAaBbBbBbCcDdDdDdDdDdEeEeEeEeEeFfGgHhHhHhHhHhIiIiKkKkKkLlLlLlLlMmMmMmNnNnNnNnOoOoOoOoPpPpRrRrRrRrSsSsSsSsSsTtTtTtTtUuUuUuUuUuVvVvWwWwWwWwWwXxXxYyZzZzZzhtwysAaAaAaAaAaAaAaAaAaAaAaAaEeEeEeEeEeEeEeEeIiIiOoOoOoOoOoOoOoOoOoOoOoOoUuUuUuUuUuUuUuYyYyYyYy"
# The combining mark blocks (Unicode category Mn in them): diacritics, extended,
# supplement, for symbols, half marks.
MARKS = "[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]"


def _fold(nfkc: str) -> str:
    return f"""
    CREATE OR REPLACE FUNCTION spaceduck_fold(text) RETURNS text LANGUAGE sql IMMUTABLE
    PARALLEL SAFE RETURN regexp_replace(translate({nfkc}, '{FOLD_FROM}', '{FOLD_TO}'),
                                        '{MARKS}', '', 'g')
    """


# normalize() needs a UTF8 database (the only encoding spaceduck's texts fit in); on any
# other the function folds as before, without NFKC.
FORWARD = [
    f"""
    DO $$
    BEGIN
        IF current_setting('server_encoding') = 'UTF8' THEN
            EXECUTE $f${_fold("normalize($1, NFKC)")}$f$;
        ELSE
            EXECUTE $f${_fold("$1")}$f$;
        END IF;
    END
    $$
    """,
    "DELETE FROM notes_fts",
    """
    INSERT INTO notes_fts (note_id, body)
        SELECT n.id, to_tsvector('simple', spaceduck_fold(n.body)) FROM notes_note AS n
        WHERE EXISTS (SELECT 1 FROM notes_notesearchkind AS k WHERE k.kind = n.namespace_kind)
    """,
]
REVERSE = [
    f"""
    CREATE OR REPLACE FUNCTION spaceduck_fold(text) RETURNS text LANGUAGE sql IMMUTABLE
    PARALLEL SAFE RETURN translate($1, '{FOLD_FROM}', '{FOLD_TO}')
    """,
    "DELETE FROM notes_fts",
    """
    INSERT INTO notes_fts (note_id, body)
        SELECT n.id, to_tsvector('simple', spaceduck_fold(n.body)) FROM notes_note AS n
        WHERE EXISTS (SELECT 1 FROM notes_notesearchkind AS k WHERE k.kind = n.namespace_kind)
    """,
]


class Migration(migrations.Migration):
    dependencies = [("notes", "0004_postgresql_truncate")]

    operations = [postgresql_only(migrations.RunSQL(FORWARD, reverse_sql=REVERSE))]
