"""AdaGReS Explorer: the Streamlit entry point (``streamlit run app.py``).

Sets the page config, starts the background UMAP warm-up once per server process and
routes with ``st.navigation`` to the pages in ``app_pages/``. Shared controls and state live
in ``ui/``. (The folder is not named ``pages/``: Streamlit serves a fresh server's first
request from a ``pages/`` folder next to the entry point without ``app.py``.)
"""

import streamlit as st

from ui.projection_store import projection_method, store
from ui.sidebar import register_pages

#: The page icon, drawn here (a funnel: select from a pool) so that the browser fetches no
#: icon from a font host: ``st.set_page_config`` turns an SVG string into a data URL.
FAVICON = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">'
    '<rect width="24" height="24" rx="5" fill="#0072B2"/>'
    '<path d="M5 6h14l-5.5 6.5V18l-3 1.5v-7z" fill="#ffffff"/></svg>'
)
st.set_page_config(page_title="AdaGReS Explorer", page_icon=FAVICON, layout="wide")

# Created once per server process: starts numba's compilation in a background thread.
store(projection_method())

selection = st.Page(
    "app_pages/2_selection.py",
    title="Selection",
    icon=":material/checklist:",
    url_path="home",
    default=True,
)
pages = [
    st.Page("app_pages/1_pool.py", title="Pool", icon=":material/database:", url_path="pool"),
    selection,
    st.Page(
        "app_pages/3_similarity.py",
        title="Similarity",
        icon=":material/grid_on:",
        url_path="similarity",
    ),
    st.Page(
        "app_pages/4_lambda.py", title="λ derivation", icon=":material/function:", url_path="lambda"
    ),
    st.Page(
        "app_pages/5_compare.py",
        title="Compare",
        icon=":material/compare_arrows:",
        url_path="compare",
    ),
    st.Page("app_pages/6_why.py", title="Why dropped", icon=":material/help:", url_path="why"),
    st.Page(
        "app_pages/7_evidence.py", title="Evidence", icon=":material/labs:", url_path="evidence"
    ),
    st.Page("app_pages/8_live.py", title="Live pool", icon=":material/bolt:", url_path="live"),
    st.Page(
        "app_pages/9_pool_sets.py", title="Pool sets", icon=":material/table:", url_path="pool_sets"
    ),
]
# The Selection page is the default, so Streamlit serves it at "/"; "/selection" (its name
# in the sidebar, typed by hand, or an older link) forwards there with the same settings
# instead of showing "Page not found".
# Streamlit's page list drops the query string on a page switch; the sidebar's own list
# (ui.sidebar.register_pages) carries the view's address instead.
register_pages(pages)
pages.append(
    st.Page(
        lambda: st.switch_page(selection, query_params=st.query_params.to_dict()),
        title="Selection",
        url_path="selection",
        visibility="hidden",
    )
)
st.navigation(pages, position="hidden").run()
# The end of a full run, as a number that grows: the real-browser tests wait for it after an
# action instead of sleeping (a style element with only a comment takes no room).
runs = st.session_state["app_runs"] = st.session_state.get("app_runs", 0) + 1
st.html(f"<style>/* adagres-run {runs} */</style>")
