//! The mouse, as the audit screens read it: the wheel and the left button, with where the
//! pointer was. What a click is on is for the screen under it to say (`app`).

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Position;

/// Two clicks on one row within this time open it.
pub const DOUBLE_CLICK: std::time::Duration = std::time::Duration::from_millis(500);

/// Rows the wheel moves the queue's selection, lines it scrolls the help.
pub const WHEEL_STEP: usize = 3;

/// What the mouse did that the screens answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pointer {
    /// The wheel: up is -1, down 1.
    Wheel(isize),
    /// The left button pressed at a cell.
    Click(Position),
}

/// The wheel or a left click of a mouse event; `None` for anything else (a motion, a
/// release, another button).
pub fn pointer(m: &MouseEvent) -> Option<Pointer> {
    match m.kind {
        MouseEventKind::ScrollUp => Some(Pointer::Wheel(-1)),
        MouseEventKind::ScrollDown => Some(Pointer::Wheel(1)),
        MouseEventKind::Down(MouseButton::Left) => {
            Some(Pointer::Click(Position::new(m.column, m.row)))
        }
        _ => None,
    }
}
