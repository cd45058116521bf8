"""AdaGReS Explorer: the Streamlit entry point (``streamlit run app.py``).

Sets the page config, starts the background UMAP warm-up once per server process and
routes to the pages in ``pages/``. Shared controls and state live in ``ui/``.
"""

import streamlit as st

from ui.projection_store import projection_method, store
from ui.render import FAVICON, preload_charts

st.set_page_config(page_title="AdaGReS Explorer", page_icon=FAVICON, layout="wide")
# The browser starts compiling its chart code now, not when the first chart arrives.
preload_charts()

# Created once per server process: starts numba's compilation in a background thread.
store(projection_method())

selection = st.Page(
    "pages/2_selection.py",
    title="Selection",
    icon=":material/checklist:",
    url_path="home",
    default=True,
)
pages = [
    st.Page("pages/1_pool.py", title="Pool", icon=":material/database:", url_path="pool"),
    selection,
    st.Page(
        "pages/3_similarity.py",
        title="Similarity",
        icon=":material/grid_on:",
        url_path="similarity",
    ),
    st.Page(
        "pages/4_lambda.py", title="λ derivation", icon=":material/function:", url_path="lambda"
    ),
    st.Page(
        "pages/5_compare.py", title="Compare", icon=":material/compare_arrows:", url_path="compare"
    ),
    st.Page("pages/6_why.py", title="Why dropped", icon=":material/help:", url_path="why"),
    st.Page("pages/7_evidence.py", title="Evidence", icon=":material/labs:", url_path="evidence"),
    st.Page("pages/8_live.py", title="Live pool", icon=":material/bolt:", url_path="live"),
    st.Page(
        "pages/9_pool_sets.py", title="Pool sets", icon=":material/table:", url_path="pool_sets"
    ),
]
# The Selection page is the default, so Streamlit serves it at "/"; "/selection" (its name
# in the sidebar, typed by hand) forwards there with the same settings instead of showing
# "Page not found".
pages.append(st.Page(lambda: st.switch_page(selection, query_params=st.query_params.to_dict()),
                     title="Selection", url_path="selection", visibility="hidden"))  # fmt: skip
st.navigation(pages).run()
# The end of a full run, as a number that grows: the real-browser tests wait for it after an
# action instead of sleeping (a style element with only a comment takes no room).
runs = st.session_state["app_runs"] = st.session_state.get("app_runs", 0) + 1
st.html(f"<style>/* adagres-run {runs} */</style>")
