//! placeholder
use super::app::App;
use super::research::ViewData;
use ratatui::Frame;
use ratatui::layout::Rect;
pub fn draw(_f: &mut Frame, _app: &App, _d: &ViewData, _area: Rect) {}
