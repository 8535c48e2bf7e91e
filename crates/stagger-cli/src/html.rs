//! One self-contained HTML page from the CLI's Markdown: its text and tables, with each plot
//! inlined as SVG where the Markdown shows it as an image, under a caption that says what to
//! see. The page fetches nothing: no stylesheet, script, font or image from anywhere else.
//!
//! It fits a window 1280 px wide: a table's cells wrap between words and after each `_` of a
//! long field name (`peak_window_share`), and break a word only if it is wider than its column
//! can be, so no table is wider than the text and no column is squeezed narrower than its
//! longest word (`overflow-wrap: break-word`: with `anywhere`, a word's characters counted
//! as the narrowest a column can be, and the browser drew `Workload` as `Wo rkl oa d`). The
//! browser test measures each table's scroll width against its width, and each word of each
//! cell on one line.

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd, html};

use crate::plot::Figure;

/// The page's style: readable text, tables whose cells wrap between words to fit (and that
/// scroll sideways as a last resort), plots that fit, and their captions.
const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;\
padding:0 1rem;line-height:1.45;color:#1a1a1a}\
table{border-collapse:collapse;display:block;overflow-x:auto;margin:1rem 0;font-size:0.9rem}\
th,td{border:1px solid #ccc;padding:0.25rem 0.5rem;vertical-align:top;overflow-wrap:break-word}\
th{background:#f3f3f3}code{background:#f3f3f3;padding:0 0.2rem}\
pre{overflow-x:auto}\
figure{margin:1rem 0}figure svg{max-width:100%;height:auto}\
figcaption{max-width:50rem;font-size:0.9rem;color:#444}";

/// `markdown` as a whole HTML document titled `title`. An image whose address is the name of
/// one of `plots` (`herd.svg`) becomes that SVG, inline, with its caption; any other image
/// becomes its alt text, so that the page never loads a file.
#[must_use]
pub(crate) fn page(title: &str, markdown: &str, plots: &[Figure]) -> String {
    let mut events = Vec::new();
    let mut in_image = false;
    let mut in_table = false;
    for event in Parser::new_ext(markdown, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Image { dest_url, .. }) => {
                in_image = true;
                match plots.iter().find(|f| f.name == dest_url.as_ref()) {
                    Some(figure) => events.push(Event::Html(
                        format!(
                            "<figure data-plot=\"{}\">{}<figcaption>{}</figcaption></figure>",
                            escape(figure.name),
                            body(&figure.svg),
                            escape(figure.caption)
                        )
                        .into(),
                    )),
                    None => events.push(Event::Html("<em>[plot: ".into())),
                }
            }
            Event::Start(Tag::Table(alignments)) => {
                in_table = true;
                events.push(Event::Start(Tag::Table(alignments)));
            }
            Event::End(TagEnd::Table) => {
                in_table = false;
                events.push(Event::End(TagEnd::Table));
            }
            Event::Text(text) if in_table && !in_image && text.contains('_') => {
                events.push(Event::Html(breakable(&text).into()));
            }
            Event::Code(code) if in_table && code.contains('_') => {
                events.push(Event::Html(
                    format!("<code>{}</code>", breakable(&code)).into(),
                ));
            }
            Event::End(TagEnd::Image) => {
                in_image = false;
                if let Some(Event::Html(last)) = events.last()
                    && last.starts_with("<figure")
                {
                    continue;
                }
                events.push(Event::Html("]</em>".into()));
            }
            // The alt text: kept only where no plot replaced the image.
            other if in_image => {
                if let Some(Event::Html(last)) = events.last()
                    && last.starts_with("<figure")
                {
                    continue;
                }
                events.push(other);
            }
            other => events.push(other),
        }
    }
    let mut content = String::new();
    html::push_html(&mut content, events.into_iter());
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{content}</body>\n</html>\n",
        escape(title)
    )
}

/// `text`, escaped, with a line break allowed after each `_`: a field name such as
/// `peak_window_share` wraps at its words.
fn breakable(text: &CowStr<'_>) -> String {
    escape(text).replace('_', "_<wbr>")
}

/// An SVG document without its XML declaration, to sit inside HTML.
fn body(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(start) => &svg[start..],
        None => svg,
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plots_are_inlined_tables_rendered_and_nothing_is_fetched() {
        let svg = "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"><path d=\"M0 0\"/></svg>";
        let md = "# Title\n\n![Herd](herd.svg)\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n![Gone](gone.svg)\n";
        let herd = Figure {
            name: "herd.svg",
            svg: svg.to_owned(),
            caption: "Spikes are retries in step.",
        };
        let page = page("A & B", md, &[herd]);
        assert!(page.contains("<title>A &amp; B</title>"), "{page}");
        assert!(
            page.contains("<figure data-plot=\"herd.svg\"><svg"),
            "{page}"
        );
        assert!(
            page.contains("</svg><figcaption>Spikes are retries in step.</figcaption></figure>"),
            "{page}"
        );
        assert!(!page.contains("<?xml"), "{page}");
        assert!(
            !page.contains("Herd"),
            "the alt text of an inlined plot is dropped: {page}"
        );
        assert!(page.contains("<table>"), "{page}");
        assert!(page.contains("<td>2</td>"), "{page}");
        assert!(page.contains("<em>[plot: Gone]</em>"), "{page}");
        assert!(!page.contains("<img"), "{page}");
        assert!(!page.contains("src="), "{page}");
    }

    #[test]
    fn a_cell_breaks_a_word_only_as_a_last_resort() {
        // `anywhere` and `break-all` let the table squeeze a column to one character; the
        // browser test sees the words broken, this says why without a browser.
        for breaks_words in ["overflow-wrap:anywhere", "word-break:break-all"] {
            assert!(!STYLE.contains(breaks_words), "{breaks_words}");
        }
        assert!(
            STYLE.contains("th,td{") && STYLE.contains("overflow-wrap:break-word"),
            "{STYLE}"
        );
    }

    #[test]
    fn a_long_field_name_in_a_table_may_wrap_at_its_underscores_and_nowhere_else_changes() {
        let md = "peak_window_share\n\n| policy | peak_window_share | `max_attempts` |\n| - | - | - |\n| a & b | 0.1 | 3 |\n";
        let page = page("t", md, &[]);
        assert!(page.contains("<p>peak_window_share</p>"), "{page}");
        assert!(
            page.contains("<th>peak_<wbr>window_<wbr>share</th>"),
            "{page}"
        );
        assert!(
            page.contains("<th><code>max_<wbr>attempts</code></th>"),
            "{page}"
        );
        assert!(page.contains("<td>a &amp; b</td>"), "{page}");
    }
}
